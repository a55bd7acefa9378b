"""A --logdir holding another run is refused at once, or continued with --resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hookbus.runners import list_checkpoints
from hookbus.runners.app._cli import main

SMALL = ["--env", "CartPole-v1", "--set", "train_batch_size=128", "--set", "minibatch_size=64",
         "--set", "num_epochs=1", "--seed", "0"]  # fmt: skip


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def iterations_in(logdir: Path) -> list[int]:
    lines = (logdir / "result.jsonl").read_text().splitlines()
    return [json.loads(line)["training_iteration"] for line in lines]


@pytest.fixture
def first_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A run directory of 3 iterations, checkpointed at 2 and at its end."""
    logdir = tmp_path / "run"
    code, _, err = run(capsys, "train", *SMALL, "--iterations", "3", "--logdir", str(logdir),
                       "--checkpoint-freq", "2", "--checkpoint-at-end")  # fmt: skip
    assert (code, err) == (0, "")
    return logdir


def test_a_new_run_in_a_used_logdir_is_refused_before_training(
    first_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (first_run / "result.jsonl").read_bytes()
    code, out, err = run(capsys, "train", *SMALL, "--iterations", "1", "--logdir", str(first_run))
    assert code == 2
    assert err.count("\n") == 1
    assert "holds another run (result.jsonl and progress.csv, checkpoints up to " in err
    assert "checkpoint_000003); pass --resume to go on from its newest checkpoint, or " in err
    assert out == ""  # nothing trained
    assert (first_run / "result.jsonl").read_bytes() == before


def test_resume_goes_on_from_the_newest_checkpoint(
    first_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "train", *SMALL, "--iterations", "5", "--logdir", str(first_run),
                         "--resume", "--checkpoint-at-end")  # fmt: skip
    assert (code, err) == (0, "")
    assert f"restored {first_run / 'checkpoint_000003'} at iteration 3" in out
    assert iterations_in(first_run) == [1, 2, 3, 4, 5]
    assert list_checkpoints(first_run)[-1].name == "checkpoint_000005"


def test_resume_in_a_new_or_empty_folder_starts_a_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logdir = tmp_path / "new"
    code, _, err = run(capsys, "train", *SMALL, "--iterations", "1", "--logdir", str(logdir),
                       "--resume")  # fmt: skip
    assert (code, err) == (0, "")
    assert iterations_in(logdir) == [1]


def test_resume_without_a_checkpoint_to_go_on_from_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logdir = tmp_path / "run"
    assert run(capsys, "train", *SMALL, "--iterations", "1", "--logdir", str(logdir))[0] == 0
    code, _, err = run(capsys, "train", *SMALL, "--iterations", "2", "--logdir", str(logdir),
                       "--resume")  # fmt: skip
    assert code == 2
    assert "holds another run (result.jsonl and progress.csv) but no checkpoint to go on " in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--resume"], "--resume needs --logdir, the run directory to go on with"),
        (["--resume", "--logdir", "x", "--restore", "y"], "--resume goes on from --logdir's new"),
    ],
)
def test_resume_needs_a_logdir_and_no_restore(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, _, err = run(capsys, "train", *SMALL, *argv)
    assert code == 2
    assert message in err
