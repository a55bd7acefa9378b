"""Port of RLlib's rllib/examples/envs/custom_gym_env.py: train on a gymnasium Env class.

Changes from the original, besides its imports: its prose and comments are ours, and the
env's reward at the goal is drawn from [0.5, 1.5] with Python's ``random`` as the
original's; every call to RLlib's API is as the original makes it.
"""

import random
from typing import Optional

import gymnasium as gym
import numpy as np
from gymnasium.spaces import Box, Discrete

from hookbus.runners import (
    add_rllib_example_script_args,
    get_trainable_cls,
    register_env,  # noqa: F401  (the original imports it for its commented-out variants)
    run_rllib_example_script_experiment,
)

parser = add_rllib_example_script_args(
    default_reward=0.9, default_iters=50, default_timesteps=100000
)
parser.add_argument(
    "--corridor-length",
    type=int,
    default=10,
    help="fields in the corridor, start and goal included",
)


class SimpleCorridor(gym.Env):
    """Walk from the left end (0) to the right end; each step costs 0.01."""

    def __init__(self, config: Optional[dict] = None):
        config = config or {}
        self.end_pos = config.get("corridor_length", 7)
        self.cur_pos = 0
        self.action_space = Discrete(2)
        self.observation_space = Box(0.0, self.end_pos, shape=(1,), dtype=np.float32)

    def reset(self, *, seed=None, options=None):
        random.seed(seed)
        self.cur_pos = 0
        return np.array([self.cur_pos], np.float32), {"env_state": "reset"}

    def step(self, action):
        assert action in [0, 1], action
        if action == 0 and self.cur_pos > 0:
            self.cur_pos -= 1
        elif action == 1:
            self.cur_pos += 1
        terminated = self.cur_pos >= self.end_pos
        reward = random.uniform(0.5, 1.5) if terminated else -0.01
        return np.array([self.cur_pos], np.float32), reward, terminated, False, {}


if __name__ == "__main__":
    args = parser.parse_args()

    base_config = (
        get_trainable_cls(args.algo)
        .get_default_config()
        .environment(
            SimpleCorridor,
            env_config={"corridor_length": args.corridor_length},
        )
    )

    run_rllib_example_script_experiment(base_config, args)
