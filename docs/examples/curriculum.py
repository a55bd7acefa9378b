"""A curriculum: env_task_fn makes a TaskSettableEnv harder as the agent gets better."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from hookbus.runners import PPOConfig, TaskSettableEnv


class Corridor(TaskSettableEnv):
    """Walk right to the end of a corridor; the task is its length."""

    observation_space = gym.spaces.Box(0.0, 1.0, (1,), dtype=np.float32)
    action_space = gym.spaces.Discrete(2)  # 0: left, 1: right

    def __init__(self, config: dict[str, Any]) -> None:
        self.length = config.get("length", 3)
        self.position = 0

    def get_task(self) -> int:
        return self.length

    def set_task(self, task: int) -> None:
        self.length = task

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        self.position = 0
        return self._obs(), {"length": self.length}

    def step(self, action: int) -> Any:
        self.position = max(0, self.position + (1 if action == 1 else -1))
        done = self.position >= self.length
        return self._obs(), 1.0 if done else -0.1, done, False, {}

    def _obs(self) -> np.ndarray:
        return np.array([self.position / self.length], dtype=np.float32)


def harder_when_solved(train_results: dict[str, Any], env: Corridor, env_ctx: Any) -> int:
    """Lengthen the corridor by 2 once the mean return shows it is solved."""
    solved = train_results["env_runners"].get("episode_return_mean", -1.0) > 0.5
    return env.get_task() + 2 if solved else env.get_task()


if __name__ == "__main__":
    config = (
        PPOConfig()
        .environment(Corridor, env_config={"length": 3}, env_task_fn=harder_when_solved)
        .env_runners(num_envs_per_env_runner=2)
        .training(train_batch_size=500, minibatch_size=100, lr=1e-3)
        .debugging(seed=0)
    )
    with config.build() as algo:
        for _ in range(6):
            result = algo.train()
            lengths = algo.env_runner.foreach_env(lambda env: env.get_task())
            print(
                f"iteration {result['training_iteration']}: return "
                f"{result['env_runners']['episode_return_mean']:.2f}, corridor lengths {lengths}"
            )
