"""PPO: its learner and module (numpy), its Algorithm and its config."""

from ._algorithm import PPO as PPO, PPOConfig as PPOConfig
from ._learner import PPOLearner as PPOLearner, PPOModule as PPOModule, Trajectory as Trajectory

__all__ = ("PPO", "PPOConfig", "PPOLearner", "PPOModule", "Trajectory")
