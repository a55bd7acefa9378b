"""RLlib's names for the keys of a training result, for code that reads results by them.

RLlib's scripts write ``result[ENV_RUNNER_RESULTS][EPISODE_RETURN_MEAN]`` and stop criteria
such as ``{f"{ENV_RUNNER_RESULTS}/{EPISODE_RETURN_MEAN}": 450.0}``; these constants have
RLlib's values (``ray.rllib.utils.metrics``, and ``TRAINING_ITERATION`` from
``ray.tune.result``). Only keys that hookbus's results carry are here: a test trains and
finds each one (tests/runners/algorithm/test_result_keys.py).
"""

from __future__ import annotations

__all__ = (
    "AGENT_EPISODE_RETURNS_MEAN",
    "ENV_RUNNER_RESULTS",
    "ENV_RUNNER_SAMPLING_TIMER",
    "EPISODE_LEN_MAX",
    "EPISODE_LEN_MEAN",
    "EPISODE_LEN_MIN",
    "EPISODE_RETURN_MAX",
    "EPISODE_RETURN_MEAN",
    "EPISODE_RETURN_MIN",
    "EVALUATION_ITERATION_TIMER",
    "EVALUATION_RESULTS",
    "LEARNER_RESULTS",
    "LEARNER_UPDATE_TIMER",
    "MODULE_EPISODE_RETURNS_MEAN",
    "NUM_AGENT_STEPS_SAMPLED",
    "NUM_AGENT_STEPS_SAMPLED_LIFETIME",
    "NUM_ENV_STEPS_SAMPLED",
    "NUM_ENV_STEPS_SAMPLED_LIFETIME",
    "NUM_EPISODES",
    "NUM_EPISODES_LIFETIME",
    "NUM_MODULE_STEPS_SAMPLED",
    "NUM_MODULE_STEPS_SAMPLED_LIFETIME",
    "NUM_MODULE_STEPS_TRAINED",
    "SYNCH_WORKER_WEIGHTS_TIMER",
    "TIMERS",
    "TRAINING_ITERATION",
    "TRAINING_ITERATION_TIMER",
)

# The result's top level.
TRAINING_ITERATION = "training_iteration"
ENV_RUNNER_RESULTS = "env_runners"
EVALUATION_RESULTS = "evaluation"  # holds its own ENV_RUNNER_RESULTS
LEARNER_RESULTS = "learners"  # then the module id ("default_policy")
TIMERS = "timers"

# Under ENV_RUNNER_RESULTS (NUM_ENV_STEPS_SAMPLED_LIFETIME also at the top level).
EPISODE_RETURN_MEAN = "episode_return_mean"
EPISODE_RETURN_MAX = "episode_return_max"
EPISODE_RETURN_MIN = "episode_return_min"
EPISODE_LEN_MEAN = "episode_len_mean"
EPISODE_LEN_MAX = "episode_len_max"
EPISODE_LEN_MIN = "episode_len_min"
NUM_EPISODES = "num_episodes"
NUM_EPISODES_LIFETIME = "num_episodes_lifetime"
NUM_ENV_STEPS_SAMPLED = "num_env_steps_sampled"
NUM_ENV_STEPS_SAMPLED_LIFETIME = "num_env_steps_sampled_lifetime"
# Multi-agent runs: each of these holds one value per agent id or module id.
AGENT_EPISODE_RETURNS_MEAN = "agent_episode_returns_mean"
MODULE_EPISODE_RETURNS_MEAN = "module_episode_returns_mean"
NUM_AGENT_STEPS_SAMPLED = "num_agent_steps_sampled"
NUM_AGENT_STEPS_SAMPLED_LIFETIME = "num_agent_steps_sampled_lifetime"
NUM_MODULE_STEPS_SAMPLED = "num_module_steps_sampled"
NUM_MODULE_STEPS_SAMPLED_LIFETIME = "num_module_steps_sampled_lifetime"

# Under LEARNER_RESULTS / module id.
NUM_MODULE_STEPS_TRAINED = "num_module_steps_trained"

# Under TIMERS.
TRAINING_ITERATION_TIMER = "training_iteration"
EVALUATION_ITERATION_TIMER = "evaluation_iteration"
ENV_RUNNER_SAMPLING_TIMER = "env_runner_sampling_timer"
LEARNER_UPDATE_TIMER = "learner_update_timer"
SYNCH_WORKER_WEIGHTS_TIMER = "synch_weights"
