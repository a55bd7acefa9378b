"""The hookbus command in its own process: without pytest installed, and under Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from hookbus.kernel import read_recording

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "examples" / "cartpole_callbacks.py"
CLI = [sys.executable, "-m", "hookbus.runners.app._cli"]
TIMEOUT_S = 120  # a bound for a hung child, far above what these runs take

# Runs the CLI in an interpreter where pytest cannot be imported, as on a machine where
# hookbus is installed without its test extra.
WITHOUT_PYTEST = """
import sys

class NoPytest:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("pytest", "_pytest"):
            raise ModuleNotFoundError(f"No module named {name!r} (hidden by the test)", name=name)
        return None

sys.meta_path.insert(0, NoPytest())
if sys.argv[1:] == ["--check"]:
    import pytest
from hookbus.runners.app._cli import main
sys.exit(main(sys.argv[1:]))
"""


def run_without_pytest(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_PYTEST, *argv],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


def test_pytest_really_is_hidden() -> None:
    done = run_without_pytest("--check")
    assert done.returncode == 1
    assert "No module named 'pytest' (hidden by the test)" in done.stderr


def test_replay_and_inspect_work_without_pytest(hookbus_recording: Path) -> None:
    recording = str(hookbus_recording)
    done = run_without_pytest("replay", recording, "--callbacks", f"{EXAMPLE}:EpisodeReturn")
    assert done.returncode == 0, done.stderr
    assert "into EpisodeReturn" in done.stdout
    assert "theta_abs_max" in done.stdout
    done = run_without_pytest("inspect", recording)
    assert done.returncode == 0, done.stderr
    assert "episodes: " in done.stdout


def test_train_works_without_pytest(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    done = run_without_pytest(
        "train", "--env", "CartPole-v1", "--iterations", "1", "--record", str(path)
    )
    assert done.returncode == 0, done.stderr
    assert "episodes (total)" in done.stdout
    assert list(read_recording(path))


@pytest.mark.parametrize(
    ("options", "whole_group"),
    [
        ([], False),
        # A terminal's Ctrl-C signals the whole process group, worker processes included.
        (["--num-env-runners", "2", "--backend", "process"], True),
    ],
    ids=["inline", "process-group"],
)
def test_ctrl_c_prints_the_iterations_done_and_exits_130(
    tmp_path: Path, options: list[str], whole_group: bool
) -> None:
    path = tmp_path / "run.msgpack"
    child = subprocess.Popen(
        [
            *CLI,
            "train",
            "--env",
            "CartPole-v1",
            "--iterations",
            "1000",
            "--record",
            str(path),
            *options,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, so that killpg reaches it alone
    )
    watchdog = threading.Timer(TIMEOUT_S, child.kill)  # a hang fails instead of blocking
    watchdog.start()
    try:
        assert child.stdout is not None
        head = [child.stdout.readline(), child.stdout.readline()]
        assert " 1/1000 " in head[1], head  # the first progress line
        if whole_group:
            os.killpg(child.pid, signal.SIGINT)
        else:
            child.send_signal(signal.SIGINT)
        out, err = child.communicate()
    finally:
        watchdog.cancel()
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 130, err
    (line,) = err.strip().splitlines()  # one line: no traceback, not even from the workers
    assert line.startswith("hookbus train: interrupted after ")
    done = int(line.split()[-2])
    assert done >= 1
    table = out.strip().splitlines()[-(done + 2) :]
    assert "episodes (total)" in table[0]
    assert [row.split()[0] for row in table[2:]] == [str(i) for i in range(1, done + 1)]
    # The recording was closed properly: it reads to its end.
    assert list(read_recording(path))


def interrupted_run(tmp_path: Path, signals: int) -> tuple[int, str, Path]:
    """Run a long ``--checkpoint-at-end`` training and Ctrl-C it ``signals`` times."""
    logdir = tmp_path / "run"
    # Two Ctrl-Cs: iterations of 20k env steps, long enough that the second Ctrl-C, sent as
    # soon as the first is acknowledged, lands in the iteration the first one let finish
    # (the first is sent half a second into iteration 2, below).
    # One Ctrl-C has no such race: PPO's own 4000 steps still put it in the middle of an
    # iteration (the one after the first progress line), and that iteration, the one the
    # checkpoint holds and the one trained after restoring it take a fifth of the time.
    batch = 20000 if signals == 2 else 4000
    child = subprocess.Popen(
        [*CLI, "train", "--env", "CartPole-v1", "--iterations", "1000", "--seed", "0",
         "--logdir", str(logdir), "--checkpoint-at-end", "--set", f"train_batch_size={batch}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )  # fmt: skip
    watchdog = threading.Timer(TIMEOUT_S, child.kill)
    watchdog.start()
    try:
        assert child.stdout is not None
        assert child.stderr is not None
        head = [child.stdout.readline(), child.stdout.readline()]
        assert " 1/1000 " in head[1], head
        if signals == 2:
            # Into iteration 2 (4 s here), not between iterations: a first Ctrl-C that lands
            # before iteration 2 starts saves iteration 1 at once, and the save could be
            # done before the second arrives (CI saw it: "saved iteration 1").
            time.sleep(0.5)
        child.send_signal(signal.SIGINT)
        notice = child.stderr.readline()  # the first Ctrl-C is acknowledged at once
        assert "Ctrl-C: finishing this iteration, then saving a checkpoint" in notice
        if signals == 2:
            child.send_signal(signal.SIGINT)
        _, err = child.communicate()
    finally:
        watchdog.cancel()
        if child.poll() is None:
            child.kill()
            child.wait()
    return child.returncode, err, logdir


def test_ctrl_c_with_checkpoint_at_end_finishes_the_iteration_and_saves_it(
    tmp_path: Path,
) -> None:
    code, err, logdir = interrupted_run(tmp_path, signals=1)
    assert code == 130, err
    line = err.strip().splitlines()[-1]
    done = int(line.split("interrupted after ")[1].split()[0])
    assert line.endswith(f"; saved iteration {done} to {logdir / f'checkpoint_{done:06d}'}")
    assert (logdir / f"checkpoint_{done:06d}").is_dir()
    # The checkpoint holds that whole iteration: training goes on from it.
    from hookbus.runners import PPO

    algo = PPO.from_checkpoint(logdir / f"checkpoint_{done:06d}")
    try:
        assert algo.training_iteration == done
        assert algo.train()["training_iteration"] == done + 1
    finally:
        algo.stop()


def test_a_second_ctrl_c_stops_at_once_and_saves_nothing(tmp_path: Path) -> None:
    code, err, logdir = interrupted_run(tmp_path, signals=2)
    assert code == 130, err
    assert (
        "no checkpoint saved (stopped at once by a second Ctrl-C)" in err.strip().splitlines()[-1]
    )
    assert not list(logdir.glob("checkpoint_*"))
