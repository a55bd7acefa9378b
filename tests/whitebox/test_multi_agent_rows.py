"""The multi-agent pipeline's rows: made per agent in blocks, put back in the keys' order."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from hookbus.runners.envs import FlattenObservations, MultiAgentEnvToModule

SPACES: dict[Any, gym.Space[Any]] = {
    "a": gym.spaces.Discrete(4),
    "b": gym.spaces.MultiDiscrete([2, 2]),
    "c": gym.spaces.Box(-1.0, 1.0, (4,), np.float32),
    3: gym.spaces.Dict({"x": gym.spaces.Discrete(2), "y": gym.spaces.MultiBinary(2)}),
}


def test_rows_of_agents_mixed_in_one_module_are_each_agents_own_in_order() -> None:
    rng = np.random.default_rng(0)
    for space in SPACES.values():
        space.seed(0)
    actions = {a: gym.spaces.Discrete(2) for a in SPACES}
    for pieces in ([], [FlattenObservations(multi_agent=True, agent_ids=["a", 3])]):
        pipeline = MultiAgentEnvToModule(pieces, SPACES, actions)
        agents = [list(SPACES)[i] for i in rng.integers(len(SPACES), size=12)]
        keys = [(agent, None) for agent in agents]
        observations = [SPACES[agent].sample() for agent in agents]
        rows = pipeline.rows(keys, observations)
        assert rows.shape == (12, 4)
        for row, agent, obs in zip(rows, agents, observations, strict=True):
            np.testing.assert_array_equal(row, pipeline.one(agent, obs))
        one_agent = pipeline.rows(keys[:1] * 3, observations[:1] * 3)
        np.testing.assert_array_equal(one_agent, [pipeline.one(agents[0], observations[0])] * 3)
