"""Train on FrozenLake (a Discrete observation) with no connector set: PPO's defaults.

The default env-to-module pipeline one-hot encodes FrozenLake's cell number for the MLP;
episodes, hooks and recordings keep the cell numbers the env gave.
"""

from __future__ import annotations

from typing import Any

from hookbus.kernel import Callback
from hookbus.runners import PPOConfig


class FirstCells(Callback):
    """Show what an episode holds: the env's own observations."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[int] = []

    def on_episode_end(self, *, episode: Any, **kwargs: Any) -> None:
        if not self.cells:
            self.cells = [int(c) for c in episode.get_observations()[:4]]


if __name__ == "__main__":
    cells = FirstCells()
    config = (
        PPOConfig()
        .environment("FrozenLake-v1", env_config={"is_slippery": False})
        .callbacks(cells)
        .debugging(seed=0)
    )
    with config.build() as algo:
        runner = algo.env_runner
        print("env observations:", runner.env.single_observation_space)
        print("the module takes:", runner.module_observation_space)
        for _ in range(20):
            result = algo.train()
            if result["env_runners"]["episode_return_mean"] >= 0.9:
                break
    print("an episode's first cells:", cells.cells)
    print(
        f"mean return {result['env_runners']['episode_return_mean']:.2f} after "
        f"{result['num_env_steps_sampled_lifetime']} env steps"
    )
    assert result["env_runners"]["episode_return_mean"] >= 0.9
