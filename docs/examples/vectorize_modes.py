"""The three vectorize modes: same config lines, different ways to step the sub-envs.

SYNC steps the sub-envs in turn in the runner's process; ASYNC gives each its own process
(worth it for slow envs); VECTOR_ENTRY_POINT uses the env's own vector implementation
(CartPole's CartPoleVectorEnv). Callbacks see the same hooks in every mode; what ``env`` and
``env_index`` mean, and where ``foreach_env`` runs, is in docs/vectorize.md.
"""

from __future__ import annotations

import os
import time
from typing import Any

import gymnasium as gym
import numpy as np

from hookbus.kernel import Callback
from hookbus.runners import PPOConfig


class SlowCorridor(gym.Env[Any, Any]):
    """Walk right to the end of a corridor; every step takes 2 ms (a slow simulator)."""

    observation_space = gym.spaces.Box(0.0, 1.0, (1,), dtype=np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, config: Any = None) -> None:
        self.length = (config or {}).get("length", 10)
        self.pos = 0

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        self.pos = 0
        return np.array([0.0], dtype=np.float32), {}

    def step(self, action: int) -> Any:
        time.sleep(0.002)
        self.pos = max(0, self.pos + (1 if action == 1 else -1))
        done = self.pos >= self.length
        obs = np.array([self.pos / self.length], dtype=np.float32)
        return obs, 1.0 if done else -0.01, done, False, {}


class WhereAmI(Callback):
    """Log which sub-env each episode ran in; ``env`` is the vector env in every mode."""

    def on_episode_end(
        self, *, env: Any, env_index: int, metrics_logger: Any, **kwargs: Any
    ) -> None:
        assert 0 <= env_index < env.num_envs
        metrics_logger.log_value(("episodes_in", str(env_index)), 1, reduce="sum")


def where_it_runs(env: Any) -> str:
    """Run on each sub-env (ASYNC: in its own process)."""
    return f"{type(env).__name__} in process {os.getpid()}"


def config(mode: str, env: Any, num_envs: int) -> PPOConfig:
    return (
        PPOConfig()
        .environment(env, env_config={"length": 10} if env is SlowCorridor else {})
        .env_runners(num_envs_per_env_runner=num_envs, gym_env_vectorize_mode=mode)
        .training(train_batch_size=400, minibatch_size=100, num_epochs=2)
        .callbacks(WhereAmI)
        .debugging(seed=0)
    )


def main() -> None:
    print(f"this script runs in process {os.getpid()}")
    for mode in ("SYNC", "ASYNC"):
        with config(mode, SlowCorridor, num_envs=4).build() as algo:
            start = time.perf_counter()
            result = algo.train()
            took = time.perf_counter() - start
            print(f"\n{mode}: one iteration of SlowCorridor x4 in {took:.2f} s")
            print("  per sub-env episodes:", result["env_runners"]["episodes_in"])
            for line in algo.env_runner.foreach_env(where_it_runs):
                print("  ", line)
    with config("VECTOR_ENTRY_POINT", "CartPole-v1", num_envs=16).build() as algo:
        result = algo.train()
        print("\nVECTOR_ENTRY_POINT: CartPole x16 as one CartPoleVectorEnv")
        print(f"  {result['env_runners']['num_episodes']} episodes this iteration")
        print("  foreach_env reaches the vector env itself:", algo.env_runner.foreach_env(type))


if __name__ == "__main__":  # ASYNC's sub-env processes import this script again
    main()
