"""A replay passes stand-ins for the Algorithm, the EnvRunners and their envs: what the
recording says, and a ReplayStandInError that says what to do for anything else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hookbus.events import (
    AlgorithmInit,
    BaseEvent,
    EnvironmentCreated,
    EnvRunnersRecreated,
    EpisodeCreated,
    EpisodeEnd,
    EpisodeStart,
    EpisodeStep,
    EvaluateStart,
    SampleEnd,
)
from hookbus.kernel import Callback, HookbusError, read_recording, replay_into
from hookbus.runners import EnvRunnerMetrics, ReplayStandInError

RLLIB_RECORDING = Path(__file__).parents[3] / "docs" / "examples" / "rllib_cartpole.msgpack"


def one_episode(source: str, steps: int = 3, episode: str = "e1", seq0: int = 1) -> list[BaseEvent]:
    """A runner's events for one episode of ``steps`` steps and its sample's end."""
    seq = iter(range(seq0, seq0 + 100))
    events: list[BaseEvent] = [
        EpisodeCreated(source=source, seq=next(seq), episode_id=episode),
        EpisodeStart(source=source, seq=next(seq), episode_id=episode, observation=[0.0]),
    ]
    for t in range(steps):
        done = t == steps - 1
        events.append(
            EpisodeStep(
                source=source,
                seq=next(seq),
                episode_id=episode,
                observation=[float(t)],
                action=0,
                reward=1.0,
                terminated=done,
            )
        )
    events.append(EpisodeEnd(source=source, seq=next(seq), episode_id=episode, terminated=True))
    events.append(
        SampleEnd(source=source, seq=next(seq), num_env_steps=steps, episode_ids=[episode])
    )
    return events


class Notes(Callback):
    """Note what the stand-ins say at each hook."""

    def __init__(self) -> None:
        super().__init__()
        self.runner: list[tuple[Any, ...]] = []
        self.algorithm: list[tuple[Any, ...]] = []

    def on_environment_created(self, *, env_runner: Any, env: Any, **kwargs: Any) -> None:
        config = env_runner.config
        self.runner.append(
            (env_runner.worker_index, config.in_evaluation, config.env, env.num_envs)
        )

    def on_episode_end(self, *, env_runner: Any, env: Any, metrics_logger: Any, **kw: Any) -> None:
        assert env_runner.metrics is metrics_logger
        assert env.unwrapped is env is env_runner.env
        self.runner.append((env_runner.worker_index, env_runner.config.in_evaluation))

    def on_algorithm_init(self, *, algorithm: Any, metrics_logger: Any, **kwargs: Any) -> None:
        algorithm._counters["task"] = 1  # RLlib's curriculum example keeps its task here
        self.algorithm.append(("init", algorithm.iteration, algorithm.metrics is metrics_logger))

    def on_evaluate_start(self, *, algorithm: Any, **kwargs: Any) -> None:
        self.algorithm.append(("evaluate", algorithm.iteration))

    def on_train_result(self, *, algorithm: Any, result: Any, **kwargs: Any) -> None:
        algorithm._counters["task"] += 1
        self.algorithm.append(
            (
                algorithm.iteration,
                algorithm.training_iteration,
                result["training_iteration"],
                len(algorithm.results),
                algorithm.results[-1] is result,
                algorithm._counters["task"],
            )
        )


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_stand_ins_say_what_an_rllib_recording_holds(backend: str) -> None:
    result = replay_into(RLLIB_RECORDING, Notes, backend=backend)
    (notes,) = result.callbacks
    ends = sum(isinstance(e, EpisodeEnd) for e in read_recording(RLLIB_RECORDING))
    assert notes.runner == [(1, False, "CartPole-v1", 1)] + [(1, False)] * ends
    # RLlib's algorithm.iteration at on_train_result is the result's training_iteration.
    assert notes.algorithm == [("init", 0, True), (1, 1, 1, 1, True, 2), (2, 2, 2, 2, True, 3)]


def test_an_evaluation_runner_stand_in_says_so_from_its_creation() -> None:
    source = "eval_env_runner:2"
    created = EnvironmentCreated(
        source=source, env_id="CartPole-v1", num_envs=3, worker_index=2, in_evaluation=True
    )
    events = [
        AlgorithmInit(source="algorithm"),
        created,
        *one_episode(source),
        EvaluateStart(source="algorithm", seq=1, training_iteration=4),
    ]
    (notes,) = replay_into(events, Notes).callbacks
    assert notes.runner == [(2, True, "CartPole-v1", 3), (2, True)]
    assert notes.algorithm == [("init", 0, True), ("evaluate", 4)]


def test_without_its_creation_a_runner_stand_in_reads_its_source() -> None:
    class Index(Callback):
        def on_episode_end(self, *, env_runner: Any, **kwargs: Any) -> None:
            self.seen = (env_runner.worker_index, env_runner.config.in_evaluation)

    (index,) = replay_into(one_episode("eval_env_runner:3"), Index).callbacks
    assert index.seen == (3, True)


def test_a_runner_stand_in_of_an_unnamed_source_refuses_its_index() -> None:
    class Index(Callback):
        def on_episode_end(self, *, env_runner: Any, **kwargs: Any) -> None:
            env_runner.worker_index  # noqa: B018

    with pytest.raises(ReplayStandInError, match=r"cannot give env_runner\.worker_index: .*'sb3'"):
        replay_into(one_episode("sb3"), Index)


def test_what_the_recording_cannot_hold_is_refused_with_what_to_do() -> None:
    class Renders(Callback):
        def on_episode_step(self, *, env: Any, **kwargs: Any) -> None:
            env.envs[0].unwrapped.state  # noqa: B018  (as the ported example reads it)

    expected = (
        r"a replay cannot give env\.envs: the env \(source 'env_runner:1'\) it passes is a "
        r"stand-in built from the recording, which gives only num_envs, unwrapped; record the "
        r"value you need in the event .* or as a custom metric, or test this callback live"
    )
    with pytest.raises(ReplayStandInError, match=expected) as caught:
        replay_into(RLLIB_RECORDING, Renders)
    assert isinstance(caught.value, HookbusError)
    assert isinstance(caught.value, AttributeError)


def test_the_algorithm_stand_in_reaches_no_runner() -> None:
    class SetsTasks(Callback):
        def on_train_result(self, *, algorithm: Any, **kwargs: Any) -> None:
            algorithm.env_runner_group.foreach_env_runner(print)

    expected = (
        r"a replay cannot give algorithm\.env_runner_group: the algorithm it passes is a "
        r"stand-in .* gives only iteration, metrics, results, _counters, training_iteration"
    )
    with pytest.raises(ReplayStandInError, match=expected):
        replay_into(RLLIB_RECORDING, SetsTasks)


def test_getattr_with_a_default_and_hasattr_work_on_stand_ins() -> None:
    class Probes(Callback):
        def on_episode_end(self, *, env: Any, env_runner: Any, **kwargs: Any) -> None:
            self.seen = (getattr(env, "envs", None), hasattr(env_runner, "sample"))

    (probes,) = replay_into(RLLIB_RECORDING, Probes).callbacks
    assert probes.seen == (None, False)


def test_a_recreation_gets_its_indices_from_the_event() -> None:
    class Recreated(Callback):
        def on_env_runners_recreated(self, **kwargs: Any) -> None:
            self.seen = (kwargs["env_runner_indices"], kwargs["is_evaluation"])

    event = EnvRunnersRecreated(source="algorithm", env_runner_indices=[1, 2], is_evaluation=True)
    (recreated,) = replay_into([event], Recreated).callbacks
    assert recreated.seen == ([1, 2], True)


def test_hookbus_own_runner_metrics_replay_with_a_stand_in_runner() -> None:
    # EnvRunnerMetrics reads a live runner's settings; a stand-in has none: the defaults.
    events = [*one_episode("env_runner:1", 3), *one_episode("env_runner:1", 5, "e2", seq0=10)]
    result = replay_into(events, EnvRunnerMetrics)
    assert result.metrics["num_episodes_lifetime"] == 2
    assert (result.metrics["episode_len_min"], result.metrics["episode_len_max"]) == (3, 5)
