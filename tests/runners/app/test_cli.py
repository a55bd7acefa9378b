"""The hookbus command: train, inspect and replay; bad input exits 2 with one line."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from hookbus.runners.app._cli import main

EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "examples" / "cartpole_callbacks.py"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "run.msgpack"
    code = main(
        [
            "train",
            "--env",
            "CartPole-v1",
            "--iterations",
            "1",
            "--seed",
            "0",
            "--callbacks",
            f"{EXAMPLE}:EpisodeReturn",
            "--record",
            str(path),
        ]
    )
    assert code == 0
    return path


def test_train_prints_progress_and_a_table_with_custom_metrics(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "train",
            "--env",
            "CartPole-v1",
            "--iterations",
            "2",
            "--seed",
            "1",
            "--callbacks",
            f"{EXAMPLE}:EpisodeReturn",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "PPO on CartPole-v1, 2 iterations, callbacks: EpisodeReturn" in out
    assert "] 2/2  return" in out
    assert "theta_abs_max" in out.splitlines()[-4]  # the table's header has the custom metric


def test_inspect_counts_hooks_sources_and_episodes(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["inspect", str(recorded), "--episodes", "2"]) == 0
    out = capsys.readouterr().out
    assert "format version 2" in out
    assert "on_episode_step" in out
    assert "env_runner:0" in out
    assert "episodes: " in out
    assert "return mean" in out
    assert "more" in out
    # CartPole pays 1 per step: each listed episode's return equals its length, so the final
    # step (an on_episode_step like the others) is counted in both.
    listed = re.findall(r"len +(\d+) +return +([\d.]+) +(?:terminated|truncated)", out)
    assert len(listed) == 2
    assert all(int(length) == float(ret) for length, ret in listed)


def test_replay_prints_the_callbacks_metrics(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(recorded), "--callbacks", f"{EXAMPLE}:EpisodeReturn"]) == 0
    out = capsys.readouterr().out
    assert "into EpisodeReturn" in out
    assert "theta_abs_max" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["train", "--env", "CartPol-v1"], "unknown env id 'CartPol-v1'"),
        (["train", "--env", "CartPole-v1", "--algo", "A3C"], "unknown algorithm 'A3C'"),
        (["train", "--env", "CartPole-v1", "--callbacks", "nomodule:X"], "cannot import"),
        (["train", "--env", "CartPole-v1", "--callbacks", "noseparator"], "is not module:Class"),
        (["inspect", "/no/such/file"], "no such file"),
        (["replay", "/no/such/file"], "no such file"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1


def test_a_damaged_recording_is_summarised_then_reported(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    torn = tmp_path / "torn.msgpack"
    torn.write_bytes(recorded.read_bytes()[:4000])
    assert main(["inspect", str(torn)]) == 2
    captured = capsys.readouterr()
    assert "events" in captured.out
    assert "the file is damaged after the events above" in captured.err
    assert "at byte offset" in captured.err
    not_a_recording = tmp_path / "notes.txt"
    not_a_recording.write_text("hello")
    assert main(["inspect", str(not_a_recording)]) == 2
    assert "is not a hookbus recording" in capsys.readouterr().err


def test_the_console_script_is_installed() -> None:
    # Installed beside the interpreter running the tests (the venv's bin/).
    exe = Path(sys.executable).parent / "hookbus"
    assert exe.is_file()
    done = subprocess.run([exe, "--help"], capture_output=True, text=True, check=True)
    assert "train" in done.stdout
    assert "replay" in done.stdout
    assert "inspect" in done.stdout
