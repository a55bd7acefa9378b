"""Multi-agent runs: every observation space, per agent, and env-to-module connectors."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import msgspec
import numpy as np
import pytest

from hookbus.events import EpisodeStep
from hookbus.kernel import Callback, ConfigError, Recorder, read_recording, replay
from hookbus.metrics import MetricsLogger
from hookbus.runners import (
    FlattenObservations,
    MultiAgentCartPole,
    ObservationPreprocessor,
    PPOConfig,
    SingleAgentObservationPreprocessor,
)

sys.path.insert(0, str(Path(__file__).parents[1]))
import space_envs

POLICIES = set(space_envs.MultiAgentSpaces.MAKERS)
MODULE_WIDTHS = {"corridor": 17, "tuple": 13, "scalar": 1, "lake": 16}


def spaces_config(connector: Any = None) -> PPOConfig:
    return (
        PPOConfig()
        .environment(space_envs.MultiAgentSpaces)
        .multi_agent(policies=POLICIES, policy_mapping_fn=space_envs.agent_is_policy)
        .env_runners(num_envs_per_env_runner=2, env_to_module_connector=connector)
        .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
        .debugging(seed=0)
    )


class WhatHooksSee(Callback):
    """Keep every agent observation the step events and the episodes carry, and actions."""

    def __init__(self) -> None:
        super().__init__()
        self.step_observations: dict[Any, list[Any]] = {}
        self.actions: dict[Any, list[Any]] = {}
        self.first_observations: dict[Any, Any] = {}

    def on_episode_step(self, *, event: EpisodeStep, **kwargs: Any) -> None:
        for agent in event.agents or ():
            if agent.observation is not msgspec.UNSET:
                self.step_observations.setdefault(agent.agent_id, []).append(agent.observation)
            if agent.action is not msgspec.UNSET:
                self.actions.setdefault(agent.agent_id, []).append(agent.action)

    def on_episode_end(self, *, episode: Any, **kwargs: Any) -> None:
        for agent_id, observations in episode.get_observations(0).items():
            self.first_observations.setdefault(agent_id, observations)


def assert_env_observation(agent_id: Any, obs: Any) -> None:
    """``obs`` is what ``agent_id``'s env gives (a Tuple may come back as a list)."""
    if agent_id == "corridor":
        assert set(obs) == {"agent", "goal", "time_left"}
    elif agent_id == "tuple":
        assert len(obs) == 3
        assert np.shape(obs[1]) == (2, 2)
    elif agent_id == "scalar":
        assert np.shape(obs) == ()
    else:
        assert isinstance(obs, int | np.integer)


def test_every_kind_of_space_trains_and_hooks_see_the_envs_observations() -> None:
    seen = WhatHooksSee()
    with spaces_config().callbacks(seen).build() as algo:
        runner = algo.env_runner
        widths = {m: obs.shape[0] for m, (obs, _) in runner.spaces.items()}
        assert widths == MODULE_WIDTHS
        result = algo.train()
    assert set(result["learners"]) >= POLICIES
    env = space_envs.MultiAgentSpaces()
    for agent_id in POLICIES:
        assert_env_observation(agent_id, seen.first_observations[agent_id])
        space = env.get_action_space(agent_id)
        actions = seen.actions[agent_id]
        assert actions
        for obs in seen.step_observations[agent_id]:
            assert_env_observation(agent_id, obs)
        if isinstance(space, gym.spaces.Box):  # Gaussian actions are not clipped
            assert all(np.shape(a) == space.shape for a in actions)
        else:
            assert all(space.contains(np.asarray(a, dtype=space.dtype)) for a in actions)


def test_module_observations_are_the_flattened_env_observations() -> None:
    with spaces_config().build() as algo:
        runner = algo.env_runner
        episode = runner.sample(num_episodes=1)[0]
        lake = episode.agent_episodes["lake"]
        rows = runner.module_observations(lake.observations, lake)
        assert rows.shape == (len(lake.observations), 16)
        np.testing.assert_array_equal(rows.argmax(axis=1), lake.observations)
        scalar = episode.agent_episodes["scalar"]
        np.testing.assert_allclose(
            runner.module_observations(scalar.observations, scalar)[:, 0], scalar.observations
        )
        action = runner.compute_single_action(lake.observations[0], policy_id="lake")
        assert 0 <= int(action) < 4


@pytest.mark.parametrize(
    "connector",
    [
        lambda env, spaces, device: FlattenObservations(multi_agent=True),
        lambda env: [FlattenObservations(multi_agent=True)],
    ],
    ids=["rllib-new-stack-form", "one-argument-list"],
)
def test_flatten_observations_multi_agent_as_rllibs_examples_write_it(connector: Any) -> None:
    default = spaces_config()
    with spaces_config(connector).build() as algo, default.build() as plain:
        runner = algo.env_runner
        assert {m: obs.shape[0] for m, (obs, _) in runner.spaces.items()} == MODULE_WIDTHS
        episode = runner.sample(num_episodes=1)[0]
        for agent_id, agent in episode.agent_episodes.items():
            assert_env_observation(agent_id, agent.observations[0])  # the episode keeps them
            np.testing.assert_array_equal(
                runner.module_observations(agent.observations, agent),
                plain.env_runner.module_observations(agent.observations, agent),
            )
        algo.train()


class Seen(SingleAgentObservationPreprocessor):
    """Keep the input space and what each agent's observations look like when they come."""

    def __init__(self) -> None:
        super().__init__()
        self.kinds: dict[Any, set[str]] = {}
        self.space_seen: Any = None

    def recompute_output_observation_space(
        self, input_observation_space: Any, input_action_space: Any
    ) -> gym.Space[Any]:
        self.space_seen = input_observation_space
        return input_observation_space

    def preprocess(self, observation: Any, episode: Any) -> Any:
        self.kinds.setdefault(episode.agent_id, set()).add(type(observation).__name__)
        return observation


def test_agent_ids_flatten_only_those_agents_then_the_rest_is_flattened_at_the_end() -> None:
    seen = Seen()
    connector = lambda env: [FlattenObservations(multi_agent=True, agent_ids=["lake"]), seen]  # noqa: E731
    with spaces_config(connector).build() as algo:
        runner = algo.env_runner
        assert {m: obs.shape[0] for m, (obs, _) in runner.spaces.items()} == MODULE_WIDTHS
        algo.train()
    # The piece after the flatten sees the Dict of agents, "lake" already a Box ...
    assert isinstance(seen.space_seen, gym.spaces.Dict)
    assert seen.space_seen["lake"].shape == (16,)
    assert isinstance(seen.space_seen["corridor"], gym.spaces.Dict)
    # ... and each agent's observations, with the agent's episode.
    assert seen.kinds["lake"] == {"ndarray"}
    assert seen.kinds["corridor"] == {"dict"}
    assert seen.kinds["tuple"] <= {"tuple", "list"}


class ScaleAgentOne(SingleAgentObservationPreprocessor):
    """Double agent 1's observations: RLlib calls a piece per agent, with its episode."""

    def preprocess(self, observation: Any, episode: Any) -> Any:
        return np.asarray(observation) * (2.0 if episode.agent_id == 1 else 1.0)


class Negate(ObservationPreprocessor):
    """RLlib 2.40's one-argument form."""

    def preprocess(self, observation: Any) -> Any:
        return -np.asarray(observation)


def test_a_users_pieces_run_per_agent_in_a_multi_agent_run() -> None:
    config = (
        PPOConfig()
        .environment(MultiAgentCartPole, env_config={"num_agents": 2})
        .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=lambda a, e, **kw: f"p{a}")
        .env_runners(env_to_module_connector=lambda env: [ScaleAgentOne(), Negate()])
        .training(train_batch_size=100, minibatch_size=50, num_epochs=1)
        .debugging(seed=0)
    )
    with config.build() as algo:
        runner = algo.env_runner
        episode = runner.sample(num_episodes=1)[0]
        for agent_id, agent in episode.agent_episodes.items():
            raw = np.asarray(agent.observations)
            rows = runner.module_observations(agent.observations, agent)
            np.testing.assert_allclose(rows, -raw * (2.0 if agent_id == 1 else 1.0))
        assert runner.spaces["p0"][0].shape == (4,)
        algo.train()


class ToAgentZero(SingleAgentObservationPreprocessor):
    """Return one agent's space where RLlib's pipeline needs a Dict of all agents."""

    def recompute_output_observation_space(
        self, input_observation_space: Any, input_action_space: Any
    ) -> gym.Space[Any]:
        space: gym.Space[Any] = input_observation_space[0]
        return space

    def preprocess(self, observation: Any, episode: Any) -> Any:
        return observation


def cartpoles(connector: Any, **multi_agent: Any) -> PPOConfig:
    return (
        PPOConfig()
        .environment(MultiAgentCartPole, env_config={"num_agents": 2})
        .multi_agent(**(multi_agent or {"policies": {"default_policy"}}))
        .env_runners(env_to_module_connector=connector)
    )


@pytest.mark.parametrize(
    ("config", "match"),
    [
        (
            cartpoles(lambda env: FlattenObservations()),
            r"FlattenObservations\(\) in a multi-agent run: allowed: "
            r"FlattenObservations\(multi_agent=True\)",
        ),
        (
            cartpoles(lambda env: FlattenObservations(multi_agent=True, agent_ids=[0, 7])),
            r"agent_ids=\[0, 7\]\): \[7\] not among the env's agents \[0, 1\]",
        ),
        (
            cartpoles(lambda env: ToAgentZero()),
            r"ToAgentZero.recompute_output_observation_space returned Box.* must return one "
            r"with the same agents \[0, 1\]",
        ),
        (
            cartpoles(lambda env: "flatten"),
            r"env_to_module_connector returned 'flatten': allowed are FlattenObservations\(\)",
        ),
    ],
    ids=["single-agent-form", "unknown-agent-id", "piece-without-agents", "not-a-piece"],
)
def test_a_bad_connector_in_a_multi_agent_run_is_one_error(config: PPOConfig, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        config.build()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"agent_ids": ["a"]}, r"FlattenObservations\(agent_ids=\['a'\]\) without multi_agent"),
        ({"multi_agent": True, "agent_ids": "a"}, r"FlattenObservations\(agent_ids='a'\)"),
        ({"multi_agent": 1}, r"FlattenObservations\(multi_agent=1\)"),
        ({"flatten_keys": True}, r"unknown keywords \['flatten_keys'\]"),
    ],
)
def test_bad_flatten_observations_keywords_name_the_value_and_what_is_allowed(
    kwargs: dict[str, Any], match: str
) -> None:
    with pytest.raises(ConfigError, match=match + r".*allowed: FlattenObservations\(\)"):
        FlattenObservations(**kwargs)


class TextAgents(space_envs.MultiAgentSpaces):
    """An agent whose space no module takes (Text)."""

    MAKERS: ClassVar[dict[str, Any]] = {
        "text": lambda config: space_envs.TextEnv(),
        "lake": space_envs.MultiAgentSpaces.MAKERS["lake"],
    }


class TwoSizes(space_envs.MultiAgentSpaces):
    """Two agents whose observations flatten to different sizes."""

    MAKERS: ClassVar[dict[str, Any]] = {
        "lake": space_envs.MultiAgentSpaces.MAKERS["lake"],
        "tuple": space_envs.TupleEnv,
    }


def test_an_unsupported_agent_space_or_a_module_of_two_sizes_is_one_error() -> None:
    config = PPOConfig().environment(TextAgents).multi_agent(policies={"text", "lake"})
    config.multi_agent(policy_mapping_fn=space_envs.agent_is_policy)
    with pytest.raises(ConfigError, match=r"agent 'text': unsupported observation space Text"):
        config.build()
    shared = PPOConfig().environment(TwoSizes).multi_agent(policies={"default_policy"})
    with pytest.raises(
        ConfigError, match=r"agent 'tuple' maps to module 'default_policy', whose input is Box"
    ):
        shared.build()


class DictActions(space_envs.MultiAgentSpaces):
    """An agent whose action space PPO does not take (a Dict)."""

    MAKERS: ClassVar[dict[str, Any]] = {"lake": space_envs.MultiAgentSpaces.MAKERS["lake"]}

    def __init__(self, config: Any = None) -> None:
        super().__init__(config)
        self.action_spaces = {"lake": gym.spaces.Dict({"a": gym.spaces.Discrete(2)})}


def test_an_agents_action_space_ppo_does_not_take_is_one_error_naming_its_policy() -> None:
    config = PPOConfig().environment(DictActions)
    config.multi_agent(policies={"lake"}, policy_mapping_fn=space_envs.agent_is_policy)
    with pytest.raises(
        ConfigError,
        match=r"policy 'lake': bad PPO setting: unsupported action space Dict.*PPO supports "
        r"Discrete, MultiDiscrete and one-dimensional Box action spaces",
    ):
        config.build()


@pytest.mark.anyio
async def test_a_recorded_multi_agent_run_of_every_space_replays_exactly(tmp_path: Path) -> None:
    path = tmp_path / "run.msgpack"
    connector = lambda env, spaces, device: FlattenObservations(multi_agent=True)  # noqa: E731
    config = spaces_config(connector).callbacks([Recorder(path), space_envs.AgentObservationTotals])
    async with config.build() as algo:
        result = await algo.atrain()
    live = result["env_runners"]
    assert live["episodes_checked"] > 0
    logger = MetricsLogger()
    seen = WhatHooksSee()
    await replay(path, [space_envs.AgentObservationTotals, seen], metrics_logger=logger)
    replayed = logger.reduce()
    assert logger.peek("episodes_checked") == live["episodes_checked"]
    assert logger.peek("observation_total") == live["observation_total"]
    assert replayed
    for agent_id in POLICIES:
        assert_env_observation(agent_id, seen.first_observations[agent_id])
    steps = [e for e in read_recording(path) if isinstance(e, EpisodeStep)]
    assert len(steps) >= 200
