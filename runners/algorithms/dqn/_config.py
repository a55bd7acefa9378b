"""DQNConfig: DQN's settings (its Algorithm, ``algo_class``, is imported when read)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ...config import AlgorithmConfig, EnvRunnersSettings, section
from .._registry import AlgorithmClass
from ._settings import DQNEvaluationSettings, DQNReportingSettings, DQNTrainingSettings

if TYPE_CHECKING:  # named in the base's type argument, a string ruff does not read
    from ._algorithm import DQN  # noqa: F401

__all__ = ("DQNConfig",)


class DQNConfig(AlgorithmConfig["DQN"]):
    """Configure DQN: RLlib's setting names and, mostly, its defaults (see docs/dqn.md).

    ``training(replay_buffer_config={...})`` updates the current buffer settings when the
    ``type`` stays the same (or is not given) and replaces them when it changes, as RLlib
    does. ``reporting(min_sample_timesteps_per_iteration=1000)`` sets how many env steps one
    ``train()`` samples at least.
    """

    algo_class = AlgorithmClass("DQN")
    default_exploration_config: ClassVar[dict[str, Any]] = {
        "type": "EpsilonGreedy",
        "initial_epsilon": 1.0,
        "final_epsilon": 0.02,
        "epsilon_timesteps": 10_000,
    }
    training = section(DQNTrainingSettings)
    evaluation = section(DQNEvaluationSettings)
    reporting = section(DQNReportingSettings)

    @property
    def rollout_fragment_length(self) -> int:
        """Env steps per sub-env per sampling round; "auto" is 4 (see docs/dqn.md)."""
        value = self.settings(EnvRunnersSettings).rollout_fragment_length
        return _AUTO_FRAGMENT if value == "auto" else int(value)

    @rollout_fragment_length.setter
    def rollout_fragment_length(self, value: int | Literal["auto"]) -> None:
        self.env_runners(rollout_fragment_length=value)


# One learner update of 32 rows per 4 env steps: RLlib's old-stack DQN default (a replay
# ratio of 8). One step per round (ratio 32, RLlib's new stack with n_step=1) reached 450 on
# CartPole in about 20% fewer env steps but three times the wall time (docs/dqn.md).
_AUTO_FRAGMENT = 4
