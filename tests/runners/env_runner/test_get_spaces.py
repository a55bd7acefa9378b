"""``EnvRunner.get_spaces()``: RLlib's dict of module id -> (observation space, action
space), with the env's spaces under ``"__env__"`` and ``"__env_single__"``
(rllib/env/single_agent_env_runner.py and multi_agent_env_runner.py, ``get_spaces``)."""

from __future__ import annotations

import gymnasium as gym
import pytest

from hookbus.runners import MultiAgentCartPole, PPOConfig


@pytest.mark.parametrize("backend", ["inline", "process"])
def test_get_spaces_on_the_local_and_remote_runners(small_ppo: PPOConfig, backend: str) -> None:
    config = small_ppo.env_runners(num_env_runners=1, backend=backend)
    with config.build() as algo:
        group = algo.env_runner_group
        local = group.local_env_runner.get_spaces()
        every = group.foreach_env_runner(lambda r: r.get_spaces())
    observation_space, action_space = local["default_policy"]
    assert isinstance(observation_space, gym.spaces.Box)
    assert action_space == gym.spaces.Discrete(2)
    assert local["__env_single__"] == (observation_space, action_space)
    vector_observations, _ = local["__env__"]
    assert vector_observations.shape[1:] == observation_space.shape
    assert len(every) == 2
    assert all(spaces["default_policy"] == local["default_policy"] for spaces in every)


def test_get_spaces_of_a_multi_agent_runner_has_each_module() -> None:
    config = (
        PPOConfig()
        .environment(MultiAgentCartPole, env_config={"num_agents": 2})
        .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=lambda aid, *a, **kw: f"p{aid}")
    )
    with config.build() as algo:
        spaces = algo.env_runner_group.local_env_runner.get_spaces()
    assert set(spaces) == {"p0", "p1", "__env__", "__env_single__"}
    assert spaces["p0"][1] == gym.spaces.Discrete(2)
