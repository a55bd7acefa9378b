"""What a runner is asked and answers, on every backend: RLlib's explore=None end to end."""

from __future__ import annotations

import gc
import types
from typing import Any

import numpy as np
import pytest

from hookbus.events import codec
from hookbus.kernel import Bus, ConfigError, Control
from hookbus.runners import (
    EnvRunner,
    MultiAgentCartPole,
    PPOConfig,
    SampleRequest,
    SampleSummary,
)


@pytest.fixture(params=["inline", "process", "ray"])
def backend(request: pytest.FixtureRequest) -> str:
    """Each backend by name; Ray's runs join the session's local Ray."""
    if request.param == "ray":
        request.getfixturevalue("ray_cluster")
    return str(request.param)


def greedy_steps(chunks: list[Any], module: Any) -> tuple[int, int]:
    """Return how many of the chunks' actions are the module's greedy ones, and of how many."""
    greedy = total = 0
    for chunk in chunks:
        observations = np.asarray(chunk.get_observations())[: len(chunk)]
        actions = np.asarray(chunk.get_actions())
        greedy += int(np.count_nonzero(module.forward_inference(observations) == actions))
        total += len(chunk)
    return greedy, total


@pytest.mark.anyio
async def test_explore_overrides_the_config_for_one_request(
    small_ppo: PPOConfig, backend: str
) -> None:
    config = small_ppo.env_runners(
        num_env_runners=1, num_envs_per_env_runner=2, backend=backend, num_cpus_per_env_runner=0.5
    )
    async with config.build() as algo:
        assert algo.env_runner.config.explore is True
        module = algo.env_runner.module  # the learner's; the remote runner holds a copy
        (runner,) = algo.env_runner_group.remote_env_runners
        greedy, total = greedy_steps(
            await runner.sample(SampleRequest(num_timesteps=100, explore=False)), module
        )
        assert greedy == total >= 100
        greedy, total = greedy_steps(await runner.sample(SampleRequest(num_timesteps=100)), module)
        assert 0 < greedy < total  # the config's explore=True: sampled, not greedy
        summary = await runner.sample_and_get_metrics(SampleRequest(num_episodes=2, exact=True))
        assert summary.num_episodes == 2


@pytest.mark.anyio
async def test_sample_explore_keyword_overrides_the_config(small_ppo: PPOConfig) -> None:
    async with small_ppo.env_runners(explore=False).build() as algo:
        runner, module = algo.env_runner, algo.env_runner.module
        greedy, total = greedy_steps(await runner.asample(num_timesteps=100), module)
        assert greedy == total >= 100
        greedy, total = greedy_steps(await runner.asample(num_timesteps=100, explore=True), module)
        assert 0 < greedy < total
        greedy, total = greedy_steps(await runner.asample(num_timesteps=100, explore=False), module)
        assert greedy == total


def test_a_bad_request_fails_where_it_is_built() -> None:
    with pytest.raises(ConfigError, match=r"takes num_timesteps or num_episodes, not both"):
        SampleRequest(num_timesteps=1, num_episodes=1)
    with pytest.raises(ConfigError, match=r"sample\(num_episodes=0\): expected an int >= 1"):
        SampleRequest(num_episodes=0)
    with pytest.raises(TypeError, match="Unexpected keyword argument 'num_steps'"):
        SampleRequest(num_steps=10)  # type: ignore[call-arg]
    assert SampleRequest() == SampleRequest(explore=None, random_actions=False)


@pytest.mark.anyio
async def test_sample_and_get_metrics_takes_a_request_or_samples_keywords() -> None:
    config = PPOConfig().environment("CartPole-v1").debugging(seed=0)
    runner = EnvRunner(config, bus=Bus())
    by_request = await runner.sample_and_get_metrics(SampleRequest(num_episodes=2, exact=True))
    by_keywords = await runner.sample_and_get_metrics(num_episodes=3, exact=True)
    assert (by_request.num_episodes, by_keywords.num_episodes) == (2, 3)
    with pytest.raises(TypeError, match="Unexpected keyword argument 'num_steps'"):
        await runner.sample_and_get_metrics(num_steps=10)


def policy_of(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    return f"p{agent_id}"


@pytest.mark.anyio
async def test_explore_reaches_every_policy_of_a_multi_agent_runner() -> None:
    config = (
        PPOConfig()
        .environment(MultiAgentCartPole, env_config={"num_agents": 2})
        .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=policy_of)
        .env_runners(num_envs_per_env_runner=2)
        .debugging(seed=0)
    )
    async with config.build() as algo:
        runner, modules = algo.env_runner, algo.env_runner.module
        for explore, all_greedy in ((False, True), (None, False)):
            greedy = total = 0
            for chunk in await runner.asample(num_timesteps=100, explore=explore):
                for agent in chunk.agent_episodes.values():
                    part = greedy_steps([agent], modules[chunk.module_for(agent.agent_id)])
                    greedy, total = greedy + part[0], total + part[1]
            assert (greedy == total) is all_greedy
            assert greedy > 0


@pytest.mark.parametrize(
    "value",
    [
        SampleRequest(num_episodes=3, explore=False, force_reset=True, exact=True),
        SampleSummary(num_env_steps=7, num_episodes=1, metrics={"a": {"b": [1.5, None]}}),
        Control(
            stop_training=True,
            end_episode=True,
            reason="enough",
            requested_by={"stop_training": ("A.on_train_result", "B.on_episode_end")},
        ),
    ],
    ids=["request", "summary", "control"],
)
def test_what_crosses_to_workers_round_trips_as_itself(value: Any) -> None:
    for encode, decode in (
        (codec.encode_msgpack, codec.decode_msgpack),
        (codec.encode_json, codec.decode_json),
    ):
        assert decode(encode(value), type=type(value)) == value


def reachable(root: Any) -> set[int]:
    """Return the ids of every object reachable from ``root`` (modules and types excluded)."""
    seen: set[int] = set()
    todo = [root]
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, type | types.ModuleType):
            continue
        seen.add(id(obj))
        todo.extend(gc.get_referents(obj))
    return seen


@pytest.mark.anyio
async def test_a_runner_keeps_no_finished_episode_after_sampling() -> None:
    config = PPOConfig().environment("CartPole-v1").env_runners(num_envs_per_env_runner=2)
    runner = EnvRunner(config.debugging(seed=0), bus=Bus())
    chunks = await runner.asample(num_episodes=5, random_actions=True)
    finished = {id(chunk) for chunk in chunks if chunk.is_done}
    assert finished
    # The caller decides how long they live: nothing of the runner holds them (the garbage
    # collector would otherwise walk thousands of them in every full collection).
    assert not finished & reachable(runner)
