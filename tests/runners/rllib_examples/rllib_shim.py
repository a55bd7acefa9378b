"""What RLlib's example scripts import from Ray, for running them on hookbus in tests.

The ported scripts next to this file change only their import lines, to this module (and
to ``hookbus``). What is here is not part of hookbus: RLlib's metric-key constants (plain
strings: hookbus uses the same keys), its example-script helpers without Ray Tune (an
argument parser with RLlib's flags, and a plain ``train()`` loop that stops as the
script's ``stop`` dict says), and the example env the scripts use.
"""

from __future__ import annotations

import argparse
from typing import Any

import gymnasium as gym
import numpy as np

from hookbus.runners import DQN, PPO, Algorithm, AlgorithmConfig

# RLlib's metric keys (ray.rllib.utils.metrics, ray.tune.result): hookbus's result keys.
TRAINING_ITERATION = "training_iteration"
ENV_RUNNER_RESULTS = "env_runners"
EVALUATION_RESULTS = "evaluation"
EPISODE_RETURN_MEAN = "episode_return_mean"
NUM_ENV_STEPS_SAMPLED = "num_env_steps_sampled"
NUM_ENV_STEPS_SAMPLED_LIFETIME = "num_env_steps_sampled_lifetime"
NUM_EPISODES = "num_episodes"

ResultDict = dict


def get_trainable_cls(name: str) -> type[Algorithm]:
    """Return the algorithm class of ``name`` (hookbus's own ``get_trainable_cls`` is
    another issue's; these scripts need PPO and DQN only)."""
    return {"PPO": PPO, "DQN": DQN}[name]


def register_env(name: str, creator: Any) -> None:
    """Refuse: hookbus's ``register_env`` is another issue's (the scripts run here do not
    call it with their default flags)."""
    raise NotImplementedError(f"register_env({name!r}) is not part of this test shim")


def add_rllib_example_script_args(
    default_iters: int = 200, default_reward: float = 100.0, default_timesteps: int = 100_000
) -> argparse.ArgumentParser:
    """Return a parser with the flags of RLlib's example scripts that matter here."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--algo", default="PPO")
    parser.add_argument("--enable-new-api-stack", action="store_true")
    parser.add_argument("--num-env-runners", type=int, default=None)
    parser.add_argument("--num-agents", type=int, default=0)
    parser.add_argument("--evaluation-parallel-to-training", action="store_true")
    parser.add_argument("--stop-iters", type=int, default=default_iters)
    parser.add_argument("--stop-reward", type=float, default=default_reward)
    parser.add_argument("--stop-timesteps", type=int, default=default_timesteps)
    parser.add_argument("--as-test", action="store_true")
    parser.add_argument("--no-tune", action="store_true")
    parser.add_argument("--local-mode", action="store_true")
    return parser


def _get(result: dict[str, Any], path: str) -> Any:
    for part in path.split("/"):
        if not isinstance(result, dict) or part not in result:
            return None
        result = result[part]
    return result


def run_rllib_example_script_experiment(
    base_config: AlgorithmConfig[Any],
    args: argparse.Namespace,
    *,
    stop: dict[str, float] | None = None,
    success_metric: dict[str, float] | None = None,
) -> list[dict[str, Any]]:
    """Train until a ``stop`` criterion is met (RLlib: Tune's stop dict); return results.

    With ``--as-test``, fail unless ``success_metric`` was reached, as RLlib's helper does.
    """
    if args.num_env_runners is not None:
        base_config.env_runners(num_env_runners=args.num_env_runners)
    stop = stop or {TRAINING_ITERATION: args.stop_iters}
    results = []
    with base_config.build() as algo:
        while True:
            result = algo.train()
            results.append(result)
            print(f"iteration {result[TRAINING_ITERATION]}")
            reached = [k for k, v in stop.items() if (_get(result, k) or -np.inf) >= v]
            if reached:
                break
    if args.as_test and success_metric:
        for key, wanted in success_metric.items():
            assert (_get(results[-1], key) or -np.inf) >= wanted, (key, wanted)
    return results


class SimpleCorridor(gym.Env[np.ndarray, int]):
    """A 1-D corridor: walk right (action 1) from cell 0 to the last cell.

    Each step costs 0.1; reaching the end gives 1.0 and ends the episode. The length can
    change between episodes (``set_corridor_length``), as RLlib's example env allows.
    """

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        self.end_pos = int((config or {}).get("corridor_length", 10))
        self.cur_pos = 0
        self.action_space = gym.spaces.Discrete(2)
        self.observation_space = gym.spaces.Box(0.0, 999.0, shape=(1,), dtype=np.float32)

    def set_corridor_length(self, length: int) -> None:
        self.end_pos = int(length)

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        self.cur_pos = 0
        return np.array([self.cur_pos], np.float32), {}

    def step(self, action: int) -> Any:
        self.cur_pos = max(0, self.cur_pos + (1 if action == 1 else -1))
        done = self.cur_pos >= self.end_pos
        reward = 1.0 if done else -0.1
        return np.array([self.cur_pos], np.float32), reward, done, False, {}
