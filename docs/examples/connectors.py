"""Connectors: RLlib's FlattenObservations, and a per-observation transform of your own.

A Dict observation (a robot's position and a target, both Discrete, and a Box) is
flattened for the MLP; your own piece subclasses ``SingleAgentObservationPreprocessor``
(``preprocess`` one observation; ``recompute_output_observation_space`` if the space
changes) and may come before the flatten in a list.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from hookbus.runners import FlattenObservations, PPOConfig, SingleAgentObservationPreprocessor


class Corridor(gym.Env[dict[str, Any], int]):
    """Walk left or right to the target; reward 1 on reaching it."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        self.n = 6
        self.observation_space = gym.spaces.Dict(
            {
                "position": gym.spaces.Discrete(self.n),
                "target": gym.spaces.Discrete(self.n),
                "noise": gym.spaces.Box(-1.0, 1.0, (3,), np.float32),
            }
        )
        self.action_space = gym.spaces.Discrete(2)

    def _obs(self) -> dict[str, Any]:
        noise = self.np_random.uniform(-1, 1, 3).astype(np.float32)
        return {"position": self.position, "target": self.target, "noise": noise}

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self.position, self.target = (int(x) for x in self.np_random.choice(self.n, 2, False))
        self.t = 0
        return self._obs(), {}

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict]:
        self.t += 1
        self.position = min(self.n - 1, max(0, self.position + (1 if action else -1)))
        done = self.position == self.target
        return self._obs(), float(done), done, self.t >= self.n and not done, {}


class DropNoise(SingleAgentObservationPreprocessor):
    """Remove the "noise" key: the module sees position and target only."""

    def recompute_output_observation_space(
        self, input_observation_space: Any, input_action_space: Any
    ) -> gym.Space[Any]:
        kept = {k: s for k, s in input_observation_space.spaces.items() if k != "noise"}
        return gym.spaces.Dict(kept)

    def preprocess(self, observation: Any, episode: Any) -> Any:
        return {k: v for k, v in observation.items() if k != "noise"}


def train(connector: Any) -> tuple[Any, float]:
    config = (
        PPOConfig()
        .environment(Corridor)
        .env_runners(env_to_module_connector=connector)
        .debugging(seed=0)
    )
    with config.build() as algo:
        for _ in range(4):
            result = algo.train()
        return algo.env_runner.module_observation_space, result["env_runners"][
            "episode_return_mean"
        ]


if __name__ == "__main__":
    # As RLlib's examples write it: a lambda, which also reaches process and Ray workers.
    space, mean = train(lambda env: FlattenObservations())
    print(f"FlattenObservations: the module takes {space}; mean return {mean:.2f}")
    space, mean = train(lambda env: [DropNoise(), FlattenObservations()])
    print(f"DropNoise, then FlattenObservations: {space}; mean return {mean:.2f}")
    assert space.shape == (12,)
