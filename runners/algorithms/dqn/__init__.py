"""DQN: its learner and module (numpy), replay buffers, its Algorithm and its config.

``DQN`` is imported on first use (``algorithm/_tune.py`` says why).
"""

from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    if name == "DQN":
        from ._algorithm import DQN

        globals()[name] = DQN  # made once: later lookups find it here
        return DQN
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
