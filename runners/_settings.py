"""The settings every algorithm's config has, by section: RLlib's names and defaults."""

from __future__ import annotations

from typing import Any

__all__ = ("COMMON_SETTINGS",)

COMMON_SETTINGS: dict[str, dict[str, Any]] = {
    "environment": {"env": None, "env_config": {}, "env_task_fn": None},
    "env_runners": {
        "num_env_runners": 0,
        "num_envs_per_env_runner": 1,
        "backend": "inline",
        "rollout_fragment_length": "auto",
        "explore": True,
        "exploration_config": None,
        "metrics_num_episodes_for_smoothing": 100,
        "sample_timeout_s": 60.0,
        "num_cpus_per_env_runner": 1,
    },
    "training": {
        "lr": 3e-4,
        "gamma": 0.99,
        "train_batch_size": 4000,
        "model": {"fcnet_hiddens": [64, 64]},
        "learner_class": None,
    },
    "debugging": {"seed": None},
    # RLlib's names and defaults (docs/evaluation.md says where hookbus differs and why).
    "evaluation": {
        "evaluation_interval": None,
        "evaluation_duration": 10,
        "evaluation_duration_unit": "episodes",
        "evaluation_sample_timeout_s": 120.0,
        "evaluation_auto_duration_min_env_steps_per_sample": 100,
        "evaluation_auto_duration_max_env_steps_per_sample": 2000,
        "evaluation_parallel_to_training": False,
        "evaluation_config": None,
        "evaluation_num_env_runners": 0,
        "custom_evaluation_function": None,
        "enable_async_evaluation": False,
    },
    "fault_tolerance": {
        "restart_failed_env_runners": True,
        "ignore_env_runner_failures": False,
        "max_num_env_runner_restarts": 1000,
        "delay_between_env_runner_restarts_s": 60.0,
        "restart_failed_sub_environments": False,
        "env_runner_health_probe_timeout_s": 30.0,
    },
}
