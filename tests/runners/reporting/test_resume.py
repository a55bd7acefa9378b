"""A run restored from a checkpoint into its own directory keeps the earlier iterations."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from hookbus.events import TrainResult
from hookbus.kernel import Bus, ConfigError
from hookbus.runners import CsvLogger, JsonLogger, PPOConfig, TensorBoardLogger, output_callbacks


def _result(iteration: int, *, value: float = 0.0, **extra: Any) -> dict[str, Any]:
    return {
        "training_iteration": iteration,
        "num_env_steps_sampled_lifetime": 100 * iteration,
        "env_runners": {"episode_return_mean": value, **extra},
    }


async def _write(logdir: Path, results: list[dict[str, Any]]) -> None:
    """Write ``results`` with a fresh set of writers, as one run (or one resumed run) would."""
    writers = [JsonLogger(logdir), CsvLogger(logdir), TensorBoardLogger(logdir)]
    async with Bus(writers) as bus:
        for seq, result in enumerate(results):
            await bus.publish(TrainResult(seq=seq, result=result), result=result)


def _tear(logdir: Path) -> None:
    """Leave what a crash in the middle of a write leaves."""
    with open(logdir / "result.jsonl", "ab") as file:
        file.write(b'{"training_iteration": 3, "env_ru')
    with open(logdir / "progress.csv", "a") as file:
        file.write("3,30")


def _files(logdir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in logdir.iterdir() if p.is_file()}


def _progress_rows(logdir: Path) -> list[dict[str, str]]:
    with open(logdir / "progress.csv", newline="") as file:
        return list(csv.DictReader(file))


def _iterations_and_values(logdir: Path) -> tuple[list[Any], list[Any], list[Any]]:
    lines = [json.loads(line) for line in (logdir / "result.jsonl").read_text().splitlines()]
    rows = _progress_rows(logdir)
    events = EventAccumulator(str(logdir))
    events.Reload()
    scalars = events.Scalars("env_runners/episode_return_mean")
    return (
        [
            (line["training_iteration"], line["env_runners"]["episode_return_mean"])
            for line in lines
        ],
        [
            (int(row["training_iteration"]), float(row["env_runners/episode_return_mean"]))
            for row in rows
        ],
        [(s.step, s.value) for s in scalars],
    )


@pytest.mark.anyio
async def test_a_resumed_run_replaces_only_the_iterations_it_writes_again(tmp_path: Path) -> None:
    # The first run got to iteration 4; its checkpoint was at 2; the resumed run goes on
    # from 3, with other values.
    await _write(tmp_path, [_result(i, value=i) for i in (1, 2, 3, 4)])
    await _write(tmp_path, [_result(i, value=10 * i) for i in (3, 4, 5)])
    jsonl, progress, tensorboard = _iterations_and_values(tmp_path)
    expected = [(1, 1.0), (2, 2.0), (3, 30.0), (4, 40.0), (5, 50.0)]
    assert jsonl == expected
    assert progress == expected
    # TensorBoard hides what the first run wrote from the resumed run's first step on.
    assert tensorboard == [(100 * i, value) for i, value in expected]


@pytest.mark.anyio
async def test_a_fresh_run_in_a_directory_holding_another_is_refused(tmp_path: Path) -> None:
    # It would mix its results and checkpoints with the other run's: refused at its first
    # result, before any writer touched a file.
    await _write(tmp_path, [_result(i, value=i) for i in (1, 2, 3)])
    (tmp_path / "checkpoint_000003").mkdir()
    before = _files(tmp_path)
    with pytest.raises(
        ConfigError,
        match=r"holds another run \(result.jsonl and progress.csv, "
        r"checkpoints up to checkpoint_000003\); a new run would mix with it: "
        r"give a new folder, or go on from its newest checkpoint",
    ):
        await _write(tmp_path, [_result(i, value=-i) for i in (1, 2)])
    assert _files(tmp_path) == before


@pytest.mark.anyio
async def test_a_run_resumed_before_the_other_runs_last_checkpoint_is_refused(
    tmp_path: Path,
) -> None:
    await _write(tmp_path, [_result(i, value=i) for i in (1, 2, 3, 4)])
    for n in (2, 4):
        (tmp_path / f"checkpoint_{n:06d}").mkdir()
    with pytest.raises(
        ConfigError,
        match=r"goes on from iteration 1, and the checkpoints past "
        r"it \(checkpoint_000002 to checkpoint_000004\) would stay",
    ):
        await _write(tmp_path, [_result(2, value=20)])
    await _write(tmp_path, [_result(5, value=50)])  # from the newest: goes on
    jsonl, _, _ = _iterations_and_values(tmp_path)
    assert jsonl == [(1, 1.0), (2, 2.0), (3, 3.0), (4, 4.0), (5, 50.0)]


@pytest.mark.anyio
async def test_a_directory_with_only_settings_or_empty_files_takes_a_fresh_run(
    tmp_path: Path,
) -> None:
    # A run that died before its first iteration left nothing to mix with.
    (tmp_path / "params.json").write_text("{}")
    (tmp_path / "result.jsonl").write_text("")
    (tmp_path / "progress.csv").write_text("training_iteration\n")
    await _write(tmp_path, [_result(1, value=1)])
    jsonl, progress, _ = _iterations_and_values(tmp_path)
    assert jsonl == progress == [(1, 1.0)]


@pytest.mark.anyio
async def test_resuming_drops_torn_lines_and_rows_and_keeps_new_columns(tmp_path: Path) -> None:
    await _write(tmp_path, [_result(1, value=1), _result(2, value=2)])
    _tear(tmp_path)
    await _write(tmp_path, [_result(3, value=3, my_metric=0.5)])
    jsonl, progress, _ = _iterations_and_values(tmp_path)
    assert jsonl == progress == [(1, 1.0), (2, 2.0), (3, 3.0)]
    rows = _progress_rows(tmp_path)
    assert [row["env_runners/my_metric"] for row in rows] == ["", "", "0.5"]


@pytest.mark.anyio
async def test_resuming_over_a_file_that_is_not_ours_starts_afresh(tmp_path: Path) -> None:
    (tmp_path / "progress.csv").write_text("a,b\n1,2\n")
    (tmp_path / "result.jsonl").write_bytes(b"[1, 2]\nnot json\n\xff\xfe\n")
    await _write(tmp_path, [_result(3, value=3)])
    jsonl, progress, _ = _iterations_and_values(tmp_path)
    assert jsonl == progress == [(3, 3.0)]


def test_restore_from_path_then_train_continues_the_run_directory(tmp_path: Path) -> None:
    logdir, checkpoint = tmp_path / "run", tmp_path / "checkpoint"

    def config() -> PPOConfig:
        return (
            PPOConfig()
            .environment("CartPole-v1")
            .training(train_batch_size=200, minibatch_size=100, num_epochs=1)
            .callbacks(callbacks_class=output_callbacks(logdir, tensorboard=True))
            .debugging(seed=0)
        )

    with config().build() as algo:
        first = [algo.train() for _ in range(2)]
        algo.save_to_path(checkpoint)
        algo.train()  # iteration 3, to be written again by the resumed run
    with config().build() as algo:
        algo.restore_from_path(checkpoint)
        resumed = [algo.train() for _ in range(2)]
    jsonl, progress, tensorboard = _iterations_and_values(logdir)
    returned = [
        (r["training_iteration"], r["env_runners"]["episode_return_mean"]) for r in first + resumed
    ]
    assert [i for i, _ in returned] == [1, 2, 3, 4]
    assert jsonl == progress == returned
    assert [step for step, _ in tensorboard] == [
        r["num_env_steps_sampled_lifetime"] for r in first + resumed
    ]
