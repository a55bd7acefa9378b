"""The run-directory writers: a real run's four outputs, new columns, crashes, pickling."""

from __future__ import annotations

import csv
import json
import math
import pickle
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from hookbus.events import TrainResult
from hookbus.kernel import Bus, Callback, ConfigError
from hookbus.runners import (
    CsvLogger,
    JsonLogger,
    PPOConfig,
    TensorBoardLogger,
    output_callbacks,
)

ITERATIONS = 3


class EpisodeLength(Callback):
    """An EnvRunner-side custom metric: results have it under env_runners/my_metric."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("my_metric", len(episode), window=10)


class IterationSeen(Callback):
    """Logs in on_train_result, listed after the writers: its metric is in their files."""

    def on_train_result(self, *, algorithm: Any, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("iteration_seen", algorithm.training_iteration, window=1)


def _config(logdir: Path) -> PPOConfig:
    return (
        PPOConfig()
        .environment("CartPole-v1")
        # vf_clip_param inf (no clipping): a setting that JSON's null would lose.
        .training(train_batch_size=200, minibatch_size=50, num_epochs=1, vf_clip_param=math.inf)
        .callbacks(
            callbacks_class=[
                EpisodeLength,
                *output_callbacks(logdir, tensorboard=True),
                IterationSeen,
            ]
        )
        .debugging(seed=0)
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    """A run directory written by a short real PPO run, and what train() returned."""
    logdir = tmp_path_factory.mktemp("run") / "ppo_seed0"
    with _config(logdir).build() as algo:
        returned = [algo.train() for _ in range(ITERATIONS)]
    return logdir, returned


def _strict_json(text: str) -> Any:
    def refuse(token: str) -> None:
        raise AssertionError(f"{token} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_a_run_directory_has_all_four_outputs(run: tuple[Path, list[dict[str, Any]]]) -> None:
    logdir, _ = run
    names = {path.name for path in logdir.iterdir()}
    assert {"params.json", "result.jsonl", "progress.csv"} <= names
    assert any(name.startswith("events.out.tfevents.") for name in names)
    assert not [name for name in names if name.endswith(".tmp")]  # atomic writes cleaned up


def test_params_json_holds_the_config_by_section(run: tuple[Path, list[dict[str, Any]]]) -> None:
    params = _strict_json((run[0] / "params.json").read_text())
    assert params["environment"]["env"] == "CartPole-v1"
    assert params["training"]["train_batch_size"] == 200
    assert params["debugging"]["seed"] == 0
    assert params["training"]["vf_clip_param"] == "inf"  # not null


def test_result_jsonl_has_every_iterations_full_result(
    run: tuple[Path, list[dict[str, Any]]],
) -> None:
    logdir, returned = run
    lines = (logdir / "result.jsonl").read_text().splitlines()
    assert [_strict_json(line) for line in lines] == returned
    assert all("my_metric" in result["env_runners"] for result in returned)


def test_metrics_logged_in_on_train_result_are_in_that_iterations_files(
    run: tuple[Path, list[dict[str, Any]]],
) -> None:
    # Writers run late in the chain, after IterationSeen although it is listed after them.
    logdir, _ = run
    lines = [json.loads(line) for line in (logdir / "result.jsonl").read_text().splitlines()]
    assert [line["iteration_seen"] for line in lines] == list(range(1, ITERATIONS + 1))
    with open(logdir / "progress.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    assert [float(row["iteration_seen"]) for row in rows] == list(range(1, ITERATIONS + 1))
    events = EventAccumulator(str(logdir))
    events.Reload()
    assert [s.value for s in events.Scalars("iteration_seen")] == [1.0, 2.0, 3.0]


def test_progress_csv_has_a_row_per_iteration(run: tuple[Path, list[dict[str, Any]]]) -> None:
    logdir, returned = run
    with open(logdir / "progress.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    assert len(rows) == ITERATIONS
    for row, result in zip(rows, returned, strict=True):
        assert float(row["env_runners/my_metric"]) == result["env_runners"]["my_metric"]
        assert int(row["training_iteration"]) == result["training_iteration"]


def test_tensorboard_scalars_are_the_results_at_their_env_steps(
    run: tuple[Path, list[dict[str, Any]]],
) -> None:
    logdir, returned = run
    events = EventAccumulator(str(logdir))
    events.Reload()
    scalars = events.Scalars("env_runners/my_metric")
    assert [s.step for s in scalars] == [r["num_env_steps_sampled_lifetime"] for r in returned]
    expected = [r["env_runners"]["my_metric"] for r in returned]
    assert [s.value for s in scalars] == pytest.approx(expected, rel=1e-6)  # float32 in TB
    tags = set(events.Tags()["scalars"])
    assert {"env_runners/episode_return_mean", "learners/default_policy/vf_loss"} <= tags
    assert "timers/training_iteration" in tags


def test_writers_stay_on_the_algorithms_bus_with_worker_processes(tmp_path: Path) -> None:
    # The config (writers included) is pickled into the worker, where observers never
    # run: the writers must pickle without their open files and still write on the driver.
    config = _config(tmp_path).env_runners(num_env_runners=1, backend="process")
    with config.build() as algo:
        returned = [algo.train() for _ in range(2)]
    lines = (tmp_path / "result.jsonl").read_text().splitlines()
    assert [_strict_json(line) for line in lines] == returned
    events = EventAccumulator(str(tmp_path))
    events.Reload()
    assert len(events.Scalars("env_runners/my_metric")) == 2


def _result(iteration: int, **env_runners: Any) -> dict[str, Any]:
    return {
        "training_iteration": iteration,
        "num_env_steps_sampled_lifetime": 100 * iteration,
        "env_runners": {"episode_return_mean": 10.0 * iteration, **env_runners},
    }


def _publish_all(bus: Bus, results: list[dict[str, Any]]) -> Any:
    async def publish() -> None:
        for seq, result in enumerate(results):
            await bus.publish(TrainResult(seq=seq, result=result), result=result)

    return publish()


def _csv_rows(path: Path) -> list[list[str]]:
    with open(path, newline="") as file:
        return list(csv.reader(file))


@pytest.mark.anyio
async def test_a_new_key_adds_a_column_and_keeps_earlier_rows(tmp_path: Path) -> None:
    path = tmp_path / "progress.csv"
    async with Bus(CsvLogger(tmp_path)) as bus:
        await _publish_all(bus, [_result(1), _result(2)])
        inode = path.stat().st_ino
        await _publish_all(bus, [_result(3, my_metric=0.5)])
        assert path.stat().st_ino != inode  # rewritten (atomically) for the new column
        inode = path.stat().st_ino
        await _publish_all(bus, [_result(4, my_metric=0.25), _result(5)])
        assert path.stat().st_ino == inode  # same columns: appended
    rows = _csv_rows(path)
    assert rows[0] == [
        "training_iteration",
        "num_env_steps_sampled_lifetime",
        "env_runners/episode_return_mean",
        "env_runners/my_metric",
    ]
    assert [row[3] for row in rows[1:]] == ["", "", "0.5", "0.25", ""]
    assert [row[0] for row in rows[1:]] == ["1", "2", "3", "4", "5"]


def test_result_jsonl_is_readable_line_by_line_after_a_crash(tmp_path: Path) -> None:
    writer = JsonLogger(tmp_path)
    nan_result = _result(2, my_metric=np.float32(0.5), lengths=np.arange(3), bad=math.nan)
    for result in (_result(1), nan_result):
        writer.on_train_result(result=result, event=None)
        # No close(): what a crashed process leaves. Every finished line is on disk.
        lines = (tmp_path / "result.jsonl").read_text().splitlines()
        assert _strict_json(lines[-1])["training_iteration"] == result["training_iteration"]
    second = _strict_json(lines[1])["env_runners"]
    assert second == {
        "episode_return_mean": 20.0,
        "my_metric": 0.5,
        "lengths": [0, 1, 2],
        "bad": None,  # NaN: strict JSON's null
    }
    writer.close()


def test_csv_cells_read_back_as_their_values(tmp_path: Path) -> None:
    writer = CsvLogger(tmp_path)
    writer.on_train_result(
        result=_result(1, nan=math.nan, flag=True, count=np.int64(7), items=[1, 2], none=None),
        event=None,
    )
    with open(tmp_path / "progress.csv", newline="") as file:
        (row,) = csv.DictReader(file)
    assert math.isnan(float(row["env_runners/nan"]))
    assert row["env_runners/flag"] == "True"
    assert row["env_runners/count"] == "7"
    assert json.loads(row["env_runners/items"]) == [1, 2]
    assert row["env_runners/none"] == ""
    writer.close()


def test_tensorboard_leaves_out_booleans_and_non_finite_values(tmp_path: Path) -> None:
    writer = TensorBoardLogger(tmp_path)
    result = _result(1, flag=True, nan=math.nan, count=np.int64(7), items=[1.0])
    writer.on_train_result(result=result, event=None)
    writer.close()
    events = EventAccumulator(str(tmp_path))
    events.Reload()
    assert set(events.Tags()["scalars"]) == {
        "training_iteration",
        "num_env_steps_sampled_lifetime",
        "env_runners/episode_return_mean",
        "env_runners/count",
    }
    assert [(s.step, s.value) for s in events.Scalars("env_runners/count")] == [(100, 7.0)]


def test_writers_pickle_without_their_open_files(tmp_path: Path) -> None:
    for writer in output_callbacks(tmp_path, tensorboard=True):
        writer.on_train_result(result=_result(1), event=None)  # files now open
        copy = pickle.loads(pickle.dumps(writer))
        assert repr(copy) == repr(writer)
        writer.close()
        copy.close()  # opened nothing: nothing to close


def test_tensorboard_true_without_tensorboardx_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "tensorboardX", None)
    with pytest.raises(ConfigError, match=r'pip install "hookbus\[tensorboard\]"'):
        output_callbacks(tmp_path, tensorboard=True)
    with pytest.raises(ConfigError, match=r"hookbus\[tensorboard\]"):
        TensorBoardLogger(tmp_path)
    assert [type(w) for w in output_callbacks(tmp_path)] == [JsonLogger, CsvLogger]


def test_tensorboard_none_or_false_chooses_the_writers(tmp_path: Path) -> None:
    assert TensorBoardLogger in [type(w) for w in output_callbacks(tmp_path)]
    assert [type(w) for w in output_callbacks(tmp_path, tensorboard=False)] == [
        JsonLogger,
        CsvLogger,
    ]


def test_a_logdir_that_cannot_be_made_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(ConfigError, match="cannot make the run directory"):
        output_callbacks(tmp_path / "file" / "run")
