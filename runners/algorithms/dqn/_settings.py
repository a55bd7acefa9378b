"""DQN's sections: its training and reporting settings, and its evaluation default."""

from __future__ import annotations

from typing import Any

import msgspec

from ...config import EvaluationSettings, ReportingSettings, TrainingSettings

__all__ = ("DQNEvaluationSettings", "DQNReportingSettings", "DQNTrainingSettings")


class DQNTrainingSettings(TrainingSettings):
    """``DQNConfig.training(...)``: RLlib's names and, mostly, its defaults (docs/dqn.md)."""

    lr: float = 5e-4
    train_batch_size: int = 32
    target_network_update_freq: int = 500
    tau: float = 1.0
    replay_buffer_config: dict[str, Any] = msgspec.field(
        default_factory=lambda: {
            "type": "PrioritizedReplayBuffer",
            "capacity": 50_000,
            "alpha": 0.6,
            "beta": 0.4,
        }
    )
    store_buffer_in_checkpoints: bool = False
    num_steps_sampled_before_learning_starts: int = 1000
    training_intensity: float | None = None
    double_q: bool = True
    dueling: bool = True
    n_step: int = 3  # RLlib: 1; see docs/dqn.md
    td_error_loss_fn: str = "huber"
    grad_clip: float | None = 40.0
    adam_epsilon: float = 1e-8


class DQNReportingSettings(ReportingSettings):
    """``DQNConfig.reporting(...)``: how many env steps one ``train()`` samples at least."""

    min_sample_timesteps_per_iteration: int = 1000


class DQNEvaluationSettings(EvaluationSettings):
    """As RLlib's DQN: evaluate the greedy policy, without epsilon's random actions."""

    evaluation_config: dict[str, Any] | None = msgspec.field(
        default_factory=lambda: {"explore": False}
    )
