"""A replay of hookbus's own run gives each iteration's metrics as ``train()`` reported them.

hookbus's cycle is one logger for every event, reduced after each ``on_train_result``: with
one runner, what its callbacks log replays to ``result["env_runners"][key]`` and what
``on_train_result`` handlers log to ``result[key]``, in the same iteration.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from hookbus.kernel import ConfigError, Recorder, read_recording_header, replay_into
from hookbus.runners import PPOConfig
from tests.runners.bridges.cycle_callbacks import DRIVER_KEYS, RUNNER_KEYS, EveryKind

ITERATIONS = 3


@pytest.fixture(scope="module")
def hookbus_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    path = tmp_path_factory.mktemp("cycles") / "run.msgpack"
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .training(train_batch_size=300, minibatch_size=100, num_epochs=1)
        .callbacks([Recorder(path), EveryKind])
        .debugging(seed=3)
    )
    with config.build() as algo:
        results = [algo.train() for _ in range(ITERATIONS)]
    return path, results


def close(ours: Any, theirs: Any) -> bool:
    if isinstance(theirs, dict):
        return ours.keys() == theirs.keys() and all(close(ours[k], theirs[k]) for k in theirs)
    return math.isclose(ours, theirs, rel_tol=1e-12)


def test_the_header_of_hookbus_own_run_names_no_producer(
    hookbus_run: tuple[Path, list[dict[str, Any]]],
) -> None:
    path, _ = hookbus_run
    header = read_recording_header(path)
    assert (header.producer, header.producer_version) == ("", "")


def test_each_iteration_replays_to_the_result_train_returned(
    hookbus_run: tuple[Path, list[dict[str, Any]]],
) -> None:
    path, results = hookbus_run
    replayed = replay_into(path, [EveryKind()])
    assert len(replayed.iterations) == ITERATIONS
    for i, (ours, result) in enumerate(zip(replayed.iterations, results, strict=True)):
        for key in RUNNER_KEYS:
            assert close(ours[key], result["env_runners"][key]), (i, key)
        for key in DRIVER_KEYS:  # on_train_result's: in that same iteration
            assert close(ours[key], result[key]), (i, key)
    cleared = [it["c_steps_cleared"] for it in replayed.iterations]
    assert sum(cleared) == replayed.iterations[-1]["c_steps_lifetime"]


def test_pooled_keeps_every_value_in_one_logger_never_reduced(
    hookbus_run: tuple[Path, list[dict[str, Any]]],
) -> None:
    path, results = hookbus_run
    pooled = replay_into(path, [EveryKind()], merge="pooled")
    cleared = [it["c_steps_cleared"] for it in pooled.iterations]
    assert cleared == [it["c_steps"] for it in pooled.iterations]  # never cleared
    assert pooled.metrics["c_steps"] == results[-1]["env_runners"]["c_steps"]


@pytest.mark.parametrize(
    ("option", "match"),
    [
        ({"merge": "true_mean"}, "merge must be one of 'framework', 'pooled', not 'true_mean'"),
        ({"producer": 3}, "producer must be a str"),
    ],
)
def test_bad_replay_options_are_refused_before_anything_runs(
    hookbus_run: tuple[Path, list[dict[str, Any]]], option: dict[str, Any], match: str
) -> None:
    path, _ = hookbus_run
    callback = EveryKind()
    with pytest.raises(ConfigError, match=match):
        replay_into(path, [callback], **option)
    assert callback.finals == []
