"""DQN: its learner and module (numpy), replay buffers, its Algorithm and its config.

``DQN`` is imported on first use (``algorithm/_tune.py`` says why).
"""

from typing import TYPE_CHECKING

from hookbus.events import on_first_use as _on_first_use

from ._config import DQNConfig as DQNConfig
from ._learner import DQNLearner as DQNLearner, DQNModule as DQNModule
from ._replay_buffer import (
    PrioritizedReplayBuffer as PrioritizedReplayBuffer,
    ReplayBuffer as ReplayBuffer,
)

if TYPE_CHECKING:
    from ._algorithm import DQN as DQN

__all__ = (
    "DQN",
    "DQNConfig",
    "DQNLearner",
    "DQNModule",
    "PrioritizedReplayBuffer",
    "ReplayBuffer",
)


__getattr__ = _on_first_use(__name__, {"DQN": ("._algorithm", "DQN")})
