"""Checkpoint writers side by side: other processes' saves, symbolic links, file modes.

Two processes saving into one parent must never lose a save: a save removes only the
temporaries of writers that are provably dead (their process gone), never another live
writer's. A checkpoint folder that is a symbolic link is refused, and a save keeps the
umask's permissions whether or not its folder existed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from hookbus.kernel import ConfigError
from hookbus.runners import PPO, PPOConfig, list_checkpoints

SAVES = 60

# Each saver builds a tiny PPO, waits for the go file (so that both save at once), then
# saves SAVES times into the shared parent under names of its own, or all into one path.
SAVER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from hookbus.runners import PPOConfig

    parent, who, mode, saves = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    config = PPOConfig().environment("CartPole-v1").training(train_batch_size=64, minibatch_size=32)
    with config.build() as algo:
        (parent / f"ready-{who}").touch()
        while not (parent / "go").exists():
            time.sleep(0.001)
        for i in range(saves):
            name = f"checkpoint_{who * 1000 + i:06d}" if mode == "own" else "checkpoint_000001"
            algo.save_to_path(parent / name)
    """
)


def save_side_by_side(parent: Path, mode: str) -> list[subprocess.CompletedProcess[str]]:
    parent.mkdir()
    savers = [
        subprocess.Popen(
            [sys.executable, "-c", SAVER, str(parent), str(who), mode, str(SAVES)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for who in (1, 2)
    ]
    deadline = time.monotonic() + 120
    while not all((parent / f"ready-{who}").exists() for who in (1, 2)):
        assert time.monotonic() < deadline, "the savers did not start"
        assert all(s.poll() is None for s in savers), [s.communicate() for s in savers]
        time.sleep(0.01)
    (parent / "go").touch()
    done = []
    for saver in savers:
        out, err = saver.communicate(timeout=300)
        done.append(subprocess.CompletedProcess(saver.args, saver.returncode, out, err))
    return done


def hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob(".*"))


def test_two_processes_saving_into_one_parent_lose_no_save(tmp_path: Path) -> None:
    parent = tmp_path / "run"
    for saver in save_side_by_side(parent, "own"):
        assert saver.returncode == 0, saver.stderr
    names = [p.name for p in list_checkpoints(parent)]
    expected = [f"checkpoint_{who * 1000 + i:06d}" for who in (1, 2) for i in range(SAVES)]
    assert names == expected
    assert hidden(parent) == []  # both writers ended: each cleaned up after itself
    algo = PPO.from_checkpoint(parent / expected[-1])
    algo.stop()


def test_two_processes_saving_into_one_path_lose_no_save(tmp_path: Path) -> None:
    parent = tmp_path / "run"
    for saver in save_side_by_side(parent, "same"):
        assert saver.returncode == 0, saver.stderr
    assert [p.name for p in list_checkpoints(parent)] == ["checkpoint_000001"]
    assert hidden(parent) == []
    algo = PPO.from_checkpoint(parent / "checkpoint_000001")
    algo.stop()


KILLED_SAVER = textwrap.dedent(
    """
    import sys
    from hookbus.runners import PPOConfig

    config = PPOConfig().environment("CartPole-v1").training(train_batch_size=64, minibatch_size=32)
    with config.build() as algo:
        algo.save_to_path(sys.argv[1])
        algo.save_to_path(sys.argv[1])  # killed once its temporary file is written
    """
)


def temporary_of_a_killed_save(folder: Path) -> Path:
    """Return the temporary file a save killed (SIGKILL) into ``folder`` left there."""
    kill = {"runner": 0, "request": "save", "at": "written", "nth": 2, "marker": f"{folder}.k"}
    env = {**os.environ, "HOOKBUS_FAULT_PLAN": json.dumps([kill])}
    done = subprocess.run(
        [sys.executable, "-c", KILLED_SAVER, str(folder)], env=env, capture_output=True
    )
    assert done.returncode == -9, done.stderr
    (left,) = (p for p in folder.iterdir() if p.name.startswith("."))
    return left


def test_a_save_removes_only_temporaries_whose_writer_is_gone(
    small_ppo: PPOConfig, tmp_path: Path
) -> None:
    folder = tmp_path / "checkpoint_000001"
    dead = temporary_of_a_killed_save(folder)
    _, host, pid, suffix = dead.name.split("-")  # .tmp-<host>-<pid>-<8 hex>.msgpack
    assert int(pid) != os.getpid()
    live = folder / f".tmp-{host}-{os.getppid()}-{suffix}"  # a process that runs: pytest's parent
    elsewhere = folder / f".tmp-{'0' * 6 if host != '0' * 6 else '1' * 6}-{pid}-{suffix}"
    for other in (live, elsewhere):
        other.write_bytes(dead.read_bytes())
    with small_ppo.build() as algo:
        algo.save_to_path(folder)
    assert not dead.exists()
    assert live.exists()  # another live writer's, maybe mid-save
    assert elsewhere.exists()  # another host's process: this one cannot tell
    assert [p.name for p in list_checkpoints(tmp_path)] == ["checkpoint_000001"]


def test_a_checkpoint_folder_that_is_a_link_is_refused(
    small_ppo: PPOConfig, tmp_path: Path
) -> None:
    target = tmp_path / "elsewhere"
    with small_ppo.build() as algo:
        algo.save_to_path(target)
        before = {p: p.read_bytes() for p in target.rglob("*") if p.is_file()}
        stray = target / f".tmp-{'0' * 6}-{os.getpid()}-0123abcd.msgpack"
        stray.write_bytes(b"someone's")
        link = tmp_path / "checkpoint_000001"
        link.symlink_to(target)
        with pytest.raises(ConfigError, match=r"checkpoint_000001'.*is a symbolic link \(to '"):
            algo.save_to_path(link)
    after = {p: p.read_bytes() for p in target.rglob("*") if p.is_file() and p != stray}
    assert after == before
    assert stray.read_bytes() == b"someone's"


def test_a_save_keeps_the_umasks_mode_in_new_and_existing_folders(
    small_ppo: PPOConfig, tmp_path: Path
) -> None:
    old = os.umask(0o027)
    try:
        with small_ppo.build() as algo:
            saved = algo.save_to_path(tmp_path / "checkpoint_000001")
            first = modes(saved)
            algo.save_to_path(saved)  # into the folder that now exists
            second = modes(saved)
    finally:
        os.umask(old)
    # The checkpoint file and the module's file; the module's folders as a new folder's.
    assert len(first) == 6
    assert first == second
    assert {mode for path, mode in first.items() if path.is_file()} == {0o640}
    assert {mode for path, mode in first.items() if path.is_dir()} == {0o750}


def modes(folder: Path) -> dict[Path, int]:
    """Return the permission bits of everything in ``folder``, at any depth."""
    return {p: p.stat().st_mode & 0o777 for p in folder.rglob("*")}


@pytest.fixture
def small_ppo() -> PPOConfig:
    return PPOConfig().environment("CartPole-v1").training(train_batch_size=64, minibatch_size=32)
