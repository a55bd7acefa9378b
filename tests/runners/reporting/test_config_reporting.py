"""``config.reporting(logdir=...)`` puts the run directory's writers on the Algorithm's bus."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from hookbus.kernel import ConfigError
from hookbus.runners import CsvLogger, JsonLogger, PPOConfig, TensorBoardLogger


def test_reporting_logdir_writes_the_run_directory(small_ppo: PPOConfig, tmp_path: Path) -> None:
    logdir = tmp_path / "run"  # a Path: stored as its string
    config = small_ppo.reporting(logdir=logdir)
    assert config.logdir == str(logdir)
    with config.build() as algo:
        writers = [type(cb) for cb in algo.bus.callbacks]
        assert {JsonLogger, CsvLogger, TensorBoardLogger} <= set(writers)
        algo.train()
        algo.train()
    lines = (logdir / "result.jsonl").read_text().splitlines()
    assert [json.loads(line)["training_iteration"] for line in lines] == [1, 2]
    assert json.loads((logdir / "params.json").read_text())["reporting"]["logdir"] == str(logdir)
    assert len((logdir / "progress.csv").read_text().splitlines()) == 3
    assert list(logdir.glob("events.out.tfevents.*"))


def test_reporting_without_tensorboard_writes_no_event_files(
    small_ppo: PPOConfig, tmp_path: Path
) -> None:
    with small_ppo.reporting(logdir=tmp_path, tensorboard=False).build() as algo:
        algo.train()
    assert not list(tmp_path.glob("events.out.tfevents.*"))
    assert (tmp_path / "progress.csv").is_file()


def test_asking_for_tensorboard_without_its_extra_is_one_clear_error(
    small_ppo: PPOConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "tensorboardX", None)
    with pytest.raises(ConfigError, match=r'pip install "hookbus\[tensorboard\]"'):
        small_ppo.reporting(logdir=tmp_path, tensorboard=True).build()


def test_bad_reporting_values_are_named(small_ppo: PPOConfig) -> None:
    with pytest.raises(ConfigError, match="tensorboard must be True, False or None, got 'yes'"):
        small_ppo.reporting(tensorboard="yes").build()  # type: ignore[arg-type]
