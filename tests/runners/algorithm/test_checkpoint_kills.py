"""A save killed (SIGKILL) at any phase leaves a complete checkpoint or none, never a torn one.

A child process trains PPO and saves twice; a fault plan (``HOOKBUS_FAULT_PLAN``, a ``Kill``
with ``request="save"``) kills it at one phase of its second save. The run directory must
then list only complete checkpoints, the newest of which restores, and the next save must
remove what the killed one left.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hookbus.runners import PPO, PPOConfig, list_checkpoints
from hookbus.runners.backends._injection import read_plan

SAVER = """
import sys
from hookbus.runners import PPOConfig

logdir, mode = sys.argv[1], sys.argv[2]
config = (
    PPOConfig().environment("CartPole-v1")
    .training(train_batch_size=64, minibatch_size=32, num_epochs=1).debugging(seed=0)
)
with config.build() as algo:
    for i in (1, 2):
        algo.train()
        algo.save_to_path(f"{logdir}/checkpoint_{i if mode == 'new' else 1:06d}")
"""


def save_killed_at(phase: str, mode: str, logdir: Path) -> int:
    """Run the saver with its second save killed at ``phase``; return its exit status."""
    kill = {"runner": 0, "request": "save", "at": phase, "nth": 2, "marker": f"{logdir}.fired"}
    env = {**os.environ, "HOOKBUS_FAULT_PLAN": json.dumps([kill])}
    done = subprocess.run(
        [sys.executable, "-c", SAVER, str(logdir), mode], env=env, capture_output=True, timeout=300
    )
    assert done.returncode in (0, -9), done.stderr.decode()
    return done.returncode


def leftovers(logdir: Path) -> list[str]:
    """Return the names of what killed saves left: hidden entries, at any depth."""
    return sorted(p.name for p in logdir.rglob(".*"))


@pytest.mark.parametrize("phase", ["begun", "written", "synced", "renamed"])
def test_a_save_killed_into_a_new_folder_leaves_it_complete_or_absent(
    phase: str, tmp_path: Path
) -> None:
    logdir = tmp_path / "run"
    assert save_killed_at(phase, "new", logdir) == -9  # SIGKILL, at the aimed moment
    expected = 2 if phase == "renamed" else 1
    saved = list_checkpoints(logdir)
    assert [p.name for p in saved] == [f"checkpoint_{i:06d}" for i in range(1, expected + 1)]
    if phase != "renamed":  # the torn save is a hidden sibling, never a checkpoint_N
        assert [name.split(".tmp-")[0] for name in leftovers(logdir)] == [".checkpoint_000002"]
    algo = PPO.from_checkpoint(saved[-1])
    try:
        assert algo.training_iteration == expected
        algo.save_to_path(logdir / "checkpoint_000003")  # the next save cleans up
    finally:
        algo.stop()
    assert leftovers(logdir) == []
    assert len(list_checkpoints(logdir)) == expected + 1


@pytest.mark.parametrize("phase", ["written", "renamed"])
def test_a_save_killed_into_an_existing_folder_keeps_the_old_or_the_new(
    phase: str, tmp_path: Path
) -> None:
    logdir = tmp_path / "run"
    assert save_killed_at(phase, "same", logdir) == -9
    (saved,) = list_checkpoints(logdir)
    algo = PPO.from_checkpoint(saved)
    try:
        assert algo.training_iteration == (2 if phase == "renamed" else 1)
        if phase == "written":  # its temporary file is left beside the old checkpoint
            assert [name[:5] for name in leftovers(logdir)] == [".tmp-"]
        algo.save_to_path(saved)
    finally:
        algo.stop()
    assert leftovers(logdir) == []


def test_listing_skips_temporaries_folders_without_a_checkpoint_and_other_names(
    tmp_path: Path,
) -> None:
    for name in ("checkpoint_000010", "checkpoint_000002", "checkpoint_000003", "other_1"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "algorithm_state.msgpack").write_bytes(b"")
    (tmp_path / "checkpoint_000004").mkdir()  # empty: no checkpoint file
    (tmp_path / ".checkpoint_000005.tmp-0123abcd").mkdir()
    (tmp_path / ".checkpoint_000005.tmp-0123abcd" / "algorithm_state.msgpack").write_bytes(b"")
    names = [p.name for p in list_checkpoints(tmp_path)]
    assert names == ["checkpoint_000002", "checkpoint_000003", "checkpoint_000010"]


def test_a_users_own_hidden_folder_is_never_cleaned_up(
    small_ppo: PPOConfig, tmp_path: Path
) -> None:
    mine = tmp_path / ".notes.tmp-0123abcd"  # a save's temporary name, but not its files
    mine.mkdir()
    (mine / "keep.txt").write_text("mine")
    with small_ppo.build() as algo:
        algo.save_to_path(tmp_path / "checkpoint_000001")
    assert (mine / "keep.txt").read_text() == "mine"
    assert [p.name for p in list_checkpoints(tmp_path)] == ["checkpoint_000001"]


def test_a_fault_plan_refuses_a_save_phase_it_does_not_know() -> None:
    plan = [{"runner": 0, "request": "save", "at": "receipt", "marker": "m"}]
    with pytest.raises(ValueError, match=r"'save' has no moment 'receipt'; its moments: begun, wr"):
        read_plan(json.dumps(plan))
    plan = [{"runner": 1, "request": "sample", "at": "renamed", "marker": "m"}]
    with pytest.raises(ValueError, match=r"'sample' has no moment 'renamed'; its moments: receipt"):
        read_plan(json.dumps(plan))
