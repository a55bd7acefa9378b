"""PPO: its learner and module (numpy), its Algorithm and its config.

``PPO`` is imported on first use (``algorithm/_tune.py`` says why).
"""

from typing import TYPE_CHECKING, Any

from ._config import PPOConfig as PPOConfig
from ._learner import PPOLearner as PPOLearner, PPOModule as PPOModule, Trajectory as Trajectory

if TYPE_CHECKING:
    from ._algorithm import PPO as PPO

__all__ = ("PPO", "PPOConfig", "PPOLearner", "PPOModule", "Trajectory")


def __getattr__(name: str) -> Any:
    if name == "PPO":
        from ._algorithm import PPO

        globals()[name] = PPO  # made once: later lookups find it here
        return PPO
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
