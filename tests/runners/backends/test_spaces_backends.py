"""Every observation space through the process and Ray backends, recorded and replayed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hookbus.events import EpisodeStep
from hookbus.kernel import Callback, Recorder, read_recording, replay_into
from hookbus.runners import FlattenObservations, PPOConfig

sys.path.insert(0, str(Path(__file__).parents[1]))  # so workers and actors import the envs
import space_envs

ENVS = {
    "dict": (space_envs.DictCorridor, {}),
    "tuple": (space_envs.TupleEnv, {}),
    "discrete": ("FrozenLake-v1", {"is_slippery": False}),
}


class FirstObservations(Callback):
    """Keep each replayed episode's first observation."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[Any] = []

    def on_episode_end(self, *, episode: Any, **kwargs: Any) -> None:
        self.seen.append(episode.get_observations(0))


def assert_replayed_as_the_env_gave(env: str, obs: Any) -> None:
    """What the env's space holds, with dtypes: ints stay ints, arrays keep dtype and shape."""
    if env == "discrete":
        assert isinstance(obs, np.integer)
    elif env == "dict":
        assert set(obs) == {"agent", "goal", "time_left"}
        assert isinstance(obs["agent"], int | np.integer)
        assert obs["time_left"].dtype == np.float32
        assert obs["time_left"].shape == (1,)
    else:  # a Tuple comes back as a list: one sequence type in MessagePack
        discrete, box, multi = obs
        assert isinstance(discrete, np.integer)
        assert (box.dtype, box.shape) == (np.float32, (2, 2))
        assert (multi.dtype.kind, multi.shape) == ("i", (2,))


def config(env: str, backend: str) -> PPOConfig:
    creator, env_config = ENVS[env]
    runners: dict[str, Any] = {"num_env_runners": 1, "backend": backend}
    if backend == "ray":
        runners["num_cpus_per_env_runner"] = 0.5
    return (
        PPOConfig()
        .environment(creator, env_config=env_config)
        # A lambda, as RLlib's examples write it: it must cross to the workers.
        .env_runners(
            num_envs_per_env_runner=2,
            env_to_module_connector=lambda env: FlattenObservations(),
            **runners,
        )
        .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
        .debugging(seed=0)
    )


def train_recorded(env: str, backend: str, path: Path) -> dict[str, Any]:
    recorder = Recorder(path)
    callbacks = [recorder, space_envs.ObservationTotals]
    with config(env, backend).callbacks(callbacks).build() as algo:
        result = algo.train()
        assert algo.env_runner.module_observation_space.shape[0] > 0
    return result


def check_replay(env: str, result: dict[str, Any], path: Path) -> None:
    live = result["env_runners"]
    assert live["episodes_checked"] > 0
    replayed = replay_into(path, [space_envs.ObservationTotals, FirstObservations])
    # Same episodes, same observations: the totals agree exactly (one runner: same order).
    assert replayed.metrics["episodes_checked"] == live["episodes_checked"]
    assert replayed.metrics["observation_total"] == live["observation_total"]
    first = replayed.callbacks[1].seen
    assert len(first) == live["episodes_checked"]
    for obs in first:
        assert_replayed_as_the_env_gave(env, obs)
    steps = [e.observation for e in read_recording(path) if isinstance(e, EpisodeStep)]
    assert len(steps) >= 200


@pytest.mark.parametrize("env", list(ENVS))
def test_process_workers_sample_record_and_replay_every_space(env: str, tmp_path: Path) -> None:
    path = tmp_path / "run.msgpack"
    check_replay(env, train_recorded(env, "process", path), path)


@pytest.mark.usefixtures("ray_cluster")
@pytest.mark.parametrize("env", list(ENVS))
def test_ray_actors_sample_record_and_replay_every_space(env: str, tmp_path: Path) -> None:
    path = tmp_path / "run.msgpack"
    check_replay(env, train_recorded(env, "ray", path), path)


class FirstAgentObservations(Callback):
    """Keep each replayed multi-agent episode's first observation of every agent."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[Any, list[Any]] = {}

    def on_episode_end(self, *, episode: Any, **kwargs: Any) -> None:
        for agent_id, obs in episode.get_observations(0).items():
            self.seen.setdefault(agent_id, []).append(obs)


def multi_agent_config(backend: str) -> PPOConfig:
    runners: dict[str, Any] = {"num_env_runners": 1, "backend": backend}
    if backend == "ray":
        runners["num_cpus_per_env_runner"] = 0.5
    return (
        PPOConfig()
        .environment(space_envs.MultiAgentSpaces)
        .multi_agent(
            policies=set(space_envs.MultiAgentSpaces.MAKERS),
            policy_mapping_fn=space_envs.agent_is_policy,
        )
        # RLlib's new-stack form, a lambda: it must cross to the workers.
        .env_runners(
            num_envs_per_env_runner=2,
            env_to_module_connector=lambda env, spaces, device: FlattenObservations(
                multi_agent=True
            ),
            **runners,
        )
        .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
        .debugging(seed=0)
    )


def check_multi_agent_run(backend: str, path: Path) -> None:
    callbacks = [Recorder(path), space_envs.AgentObservationTotals]
    with multi_agent_config(backend).callbacks(callbacks).build() as algo:
        result = algo.train()
    assert set(result["learners"]) >= set(space_envs.MultiAgentSpaces.MAKERS)
    live = result["env_runners"]
    assert live["episodes_checked"] > 0
    replayed = replay_into(path, [space_envs.AgentObservationTotals, FirstAgentObservations])
    assert replayed.metrics["episodes_checked"] == live["episodes_checked"]
    assert replayed.metrics["observation_total"] == live["observation_total"]
    first = replayed.callbacks[1].seen
    for agent_id, env in (("corridor", "dict"), ("tuple", "tuple")):
        assert len(first[agent_id]) == live["episodes_checked"]
        for obs in first[agent_id]:
            assert_replayed_as_the_env_gave(env, obs)
    # FrozenLake's own Python ints (no vector env batches them into numpy here).
    assert all(isinstance(obs, int) for obs in first["lake"])
    assert all(np.shape(obs) == () for obs in first["scalar"])


def test_process_workers_sample_record_and_replay_every_space_multi_agent(
    tmp_path: Path,
) -> None:
    check_multi_agent_run("process", tmp_path / "run.msgpack")


@pytest.mark.usefixtures("ray_cluster")
def test_ray_actors_sample_record_and_replay_every_space_multi_agent(tmp_path: Path) -> None:
    check_multi_agent_run("ray", tmp_path / "run.msgpack")
