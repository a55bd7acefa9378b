"""A replay of an RLlib bridge's recording follows RLlib 2.60's reduce cycle and merge: what
the callbacks log replays, iteration by iteration, to what ``algo.train()`` reported.

Real RLlib (PPO, torch on the CPU): the local runner sampling whole episodes, and two remote
EnvRunner actors with an evaluation round every iteration. Each run is recorded once per
module; every assertion replays its file.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import ray

from hookbus.events import EpisodeStep, TrainResult
from hookbus.kernel import (
    Callback,
    ConfigError,
    read_recording,
    read_recording_header,
    replay_into,
)
from hookbus.metrics import MetricsLogger
from hookbus.runners.bridges import rllib_callbacks
from tests.runners.bridges.cycle_callbacks import (
    DRIVER_KEYS,
    RUNNER_KEYS,
    ChunkLengths,
    EvaluationLogs,
    EveryKind,
)
from tests.runners.bridges.rllib_helpers import ppo_config

pytestmark = pytest.mark.usefixtures("ray_cluster")

ITERATIONS = 3


class Run:
    """One bridged RLlib run of ``ITERATIONS`` iterations, recorded to ``path``."""

    def __init__(self, path: Path, classes: list[type[Callback]], config: Any) -> None:
        self.path = path
        self.classes = classes
        algo = config.build_algo()
        try:
            self.results = [algo.train() for _ in range(ITERATIONS)]
        finally:
            algo.stop()


def callbacks(run: Run) -> list[Callback]:
    """Fresh instances of the callbacks ``run`` ran, for a replay."""
    return [cls() for cls in run.classes]


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The local runner, whole episodes per sample() (the issue's windowed-mean case)."""
    path = tmp_path_factory.mktemp("rllib_local") / "run.msgpack"
    classes: list[type[Callback]] = [EveryKind, ChunkLengths]
    bridge = rllib_callbacks(*classes, record=path)
    return Run(path, classes, ppo_config(0, bridge).env_runners(batch_mode="complete_episodes"))


@pytest.fixture(scope="module")
def remote_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """Two remote EnvRunners (episodes cut into chunks), an evaluation round each iteration."""
    path = tmp_path_factory.mktemp("rllib_remote") / "run.msgpack"
    classes: list[type[Callback]] = [EveryKind, EvaluationLogs]
    bridge = rllib_callbacks(*classes, record=path)
    config = ppo_config(2, bridge).evaluation(
        evaluation_interval=1,
        evaluation_duration=2,
        evaluation_duration_unit="episodes",
        evaluation_num_env_runners=0,
    )
    return Run(path, classes, config)


@pytest.fixture(params=["local_run", "remote_run"])
def run(request: pytest.FixtureRequest) -> Run:
    found: Run = request.getfixturevalue(request.param)
    return found


def same(replayed: Any, reported: Any) -> bool:
    """Whether a replayed value is RLlib's, to float rounding (NaN is NaN; dicts per key)."""
    if isinstance(reported, dict):
        return (
            isinstance(replayed, dict)
            and replayed.keys() == reported.keys()
            and all(same(replayed[k], reported[k]) for k in reported)
        )
    if isinstance(reported, float) and math.isnan(reported):
        return isinstance(replayed, float) and math.isnan(replayed)
    return replayed == pytest.approx(float(reported), rel=1e-9, abs=1e-12)


def callback_keys(tree: dict[str, Any]) -> set[str]:
    return {key for key in tree if key.startswith("c_")}


def test_the_header_names_rllib_and_its_version(local_run: Run) -> None:
    header = read_recording_header(local_run.path)
    assert (header.producer, header.producer_version) == ("rllib", ray.__version__)


def test_every_runner_key_replays_to_what_rllib_reported_each_iteration(run: Run) -> None:
    replayed = replay_into(run.path, callbacks(run))
    assert len(replayed.iterations) == ITERATIONS
    for i, (ours, reported) in enumerate(zip(replayed.iterations, run.results, strict=True)):
        theirs = reported["env_runners"]
        assert callback_keys(ours["env_runners"]) == callback_keys(theirs), i
        for key in RUNNER_KEYS:
            assert same(ours["env_runners"][key], theirs[key]), (i, key, ours, theirs)
    assert replayed.metrics == replayed.iterations[-1]  # what train() last reported


def test_the_issues_windowed_mean_of_episode_lengths_replays_per_iteration(
    local_run: Run,
) -> None:
    replayed = replay_into(local_run.path, callbacks(local_run))
    ours = [it["env_runners"]["c_len_w50"] for it in replayed.iterations]
    theirs = [r["env_runners"]["c_len_w50"] for r in local_run.results]
    assert ours == pytest.approx(theirs, rel=1e-9)


def test_what_on_train_result_logs_shows_one_iteration_late_as_in_rllib(run: Run) -> None:
    replayed = replay_into(run.path, callbacks(run))
    assert not callback_keys(run.results[0]) & set(DRIVER_KEYS)  # RLlib shows them late
    for i, (ours, reported) in enumerate(zip(replayed.iterations, run.results, strict=True)):
        assert callback_keys(ours) == callback_keys(reported), i
        for key in callback_keys(reported):
            assert same(ours[key], reported[key]), (i, key)


def test_evaluation_rounds_replay_to_rllibs_evaluation_results(remote_run: Run) -> None:
    replayed = replay_into(remote_run.path, callbacks(remote_run))
    for i, (ours, reported) in enumerate(zip(replayed.iterations, remote_run.results, strict=True)):
        theirs = reported["evaluation"]["env_runners"]
        mine = ours["evaluation"]["env_runners"]
        assert callback_keys(mine) == callback_keys(theirs), i
        for key in RUNNER_KEYS:
            assert same(mine[key], theirs[key]), (i, key)
    # Logged in on_evaluate_start/_end, after RLlib compiled the iteration: the next one's.
    assert [it.get("c_evaluations") for it in replayed.iterations] == [None, 1, 1]
    assert [r.get("c_evaluations") for r in remote_run.results] == [None, 1, 1]


def test_one_source_replays_to_that_runners_own_numbers(remote_run: Run) -> None:
    replayed = replay_into(remote_run.path, callbacks(remote_run), sources=["env_runner:1"])
    events = list(read_recording(remote_run.path))
    for i, it in enumerate(replayed.iterations):
        steps = it["env_runners"]["c_steps"]
        assert 0 < steps < remote_run.results[i]["env_runners"]["c_steps"]
    own = sum(isinstance(e, EpisodeStep) and e.source == "env_runner:1" for e in events)
    assert replayed.iterations[-1]["env_runners"]["c_steps_lifetime"] == own


def test_pooled_gives_the_true_mean_over_every_value(remote_run: Run) -> None:
    training = ["env_runner:1", "env_runner:2"]
    replayed = replay_into(remote_run.path, [EveryKind()], sources=training, merge="pooled")
    (callback,) = replayed.callbacks
    assert isinstance(callback, EveryKind)
    mean = sum(callback.finals) / len(callback.finals)
    assert replayed.metrics["c_final_all"] == pytest.approx(mean, rel=1e-9)
    assert isinstance(replayed.logger, MetricsLogger)  # the one logger, hookbus's own
    # The pooled sum is the total over the run; RLlib reports each iteration's.
    total = sum(r["env_runners"]["c_steps"] for r in remote_run.results)
    assert replayed.metrics["c_steps"] == total


def test_an_iterable_of_events_replays_rllibs_cycle_when_told_the_producer(
    local_run: Run,
) -> None:
    events = list(read_recording(local_run.path))
    assert sum(isinstance(e, TrainResult) for e in events) == ITERATIONS
    from_file = replay_into(local_run.path, callbacks(local_run))
    told = replay_into(events, callbacks(local_run), producer="rllib")
    assert repr(told.iterations) == repr(from_file.iterations)  # NaN-proof equality
    untold = replay_into(events, callbacks(local_run))  # hookbus's: one logger, flat keys
    assert "env_runners" not in untold.iterations[0]
    total = sum(r["env_runners"]["c_steps"] for r in local_run.results)  # hookbus's sums run on
    assert untold.iterations[-1]["c_steps"] == total


def test_a_logger_of_ones_own_needs_a_pooled_replay(local_run: Run) -> None:
    with pytest.raises(ConfigError, match=r"merge='pooled'"):
        replay_into(local_run.path, callbacks(local_run), metrics_logger=MetricsLogger())
    logger = MetricsLogger()
    replay_into(local_run.path, callbacks(local_run), metrics_logger=logger, merge="pooled")
    assert logger.peek("c_steps") > 0


class MeanWithCoefficient(Callback):
    def on_episode_end(self, *, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("bad", 1.0, reduce="mean", ema_coeff=0.5)


def test_what_rllib_refuses_a_replay_of_its_cycle_refuses(local_run: Run) -> None:
    with pytest.raises(ValueError, match="ema_coeff is not supported for mean reduction"):
        replay_into(local_run.path, [MeanWithCoefficient()])
