"""A save writes only what a read reads back: ``MAX_CHECKPOINT_BYTES`` on both sides.

The bound is 1 GiB; writing a state that large in a test costs gigabytes, so these tests
lower the bound in the module that keeps it (both the save and the read look it up when
they run) and save and read a small real checkpoint against it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hookbus.kernel import ConfigError
from hookbus.runners import PPOConfig, RLModule
from hookbus.runners.algorithm import _checkpoint
from hookbus.runners.algorithms import _module_loading

MODULE = Path("learner_group", "learner", "rl_module", "default_policy")


@pytest.fixture
def config() -> PPOConfig:
    return PPOConfig().environment("CartPole-v1").training(train_batch_size=64, minibatch_size=32)


def test_a_save_larger_than_the_bound_is_refused_before_anything_is_written(
    config: PPOConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with config.build() as algo:
        monkeypatch.setattr(_checkpoint, "MAX_CHECKPOINT_BYTES", 4096)
        with pytest.raises(ConfigError, match=r"would hold .* more than the 4,096 bytes .*"):
            algo.save_to_path(tmp_path / "checkpoint")
    assert os.listdir(tmp_path) == []


def test_a_read_larger_than_the_bound_names_the_file_and_the_bound(
    config: PPOConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with config.build() as algo:
        checkpoint = algo.save_to_path(tmp_path / "checkpoint")
        size = (checkpoint / "algorithm_state.msgpack").stat().st_size
        module_size = (checkpoint / MODULE / "module_state.msgpack").stat().st_size
        monkeypatch.setattr(_checkpoint, "MAX_CHECKPOINT_BYTES", size - 1)
        with pytest.raises(ConfigError, match=rf"holds {size:,} bytes .*MAX_CHECKPOINT_BYTES"):
            algo.restore_from_path(checkpoint)
    monkeypatch.setattr(_module_loading, "MAX_CHECKPOINT_BYTES", module_size - 1)
    with pytest.raises(ConfigError, match=rf"module file .* holds {module_size:,} bytes"):
        RLModule.from_checkpoint(checkpoint / MODULE)
