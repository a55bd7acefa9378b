"""PPOConfig: PPO's settings (its Algorithm, ``algo_class``, is imported when read)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...config import AlgorithmConfig, section
from .._registry import AlgorithmClass
from ._settings import PPOTrainingSettings

if TYPE_CHECKING:  # named in the base's type argument, a string ruff does not read
    from ._algorithm import PPO  # noqa: F401

__all__ = ("PPOConfig",)


class PPOConfig(AlgorithmConfig["PPO"]):
    """Configure PPO: RLlib's setting names; defaults tuned for CartPole (see docs/runners.md)."""

    algo_class = AlgorithmClass("PPO")
    training = section(PPOTrainingSettings)
