"""The hookbus command in its own process: without pytest installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
