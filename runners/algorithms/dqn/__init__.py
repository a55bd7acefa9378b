"""DQN: its learner and module (numpy), replay buffers, its Algorithm and its config."""

from ._algorithm import DQN as DQN, DQNConfig as DQNConfig
from ._learner import DQNLearner as DQNLearner, DQNModule as DQNModule
from ._replay_buffer import (
    PrioritizedReplayBuffer as PrioritizedReplayBuffer,
    ReplayBuffer as ReplayBuffer,
)

__all__ = (
    "DQN",
    "DQNConfig",
    "DQNLearner",
    "DQNModule",
    "PrioritizedReplayBuffer",
    "ReplayBuffer",
)
