"""PPO: its learner and module (numpy), its Algorithm and its config.

``PPO`` is imported on first use (``algorithm/_tune.py`` says why).
"""

from typing import TYPE_CHECKING

from hookbus.events import on_first_use as _on_first_use

from ._config import PPOConfig as PPOConfig
from ._learner import PPOLearner as PPOLearner, PPOModule as PPOModule, Trajectory as Trajectory

if TYPE_CHECKING:
    from ._algorithm import PPO as PPO

__all__ = ("PPO", "PPOConfig", "PPOLearner", "PPOModule", "Trajectory")


__getattr__ = _on_first_use(__name__, {"PPO": ("._algorithm", "PPO")})
