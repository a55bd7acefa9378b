"""The CLI names what a path is when it is not the file it asks for: never "no such file"
for a directory, a FIFO or a device, and never a wait on a FIFO nobody writes.

Every command runs in one child process (``main`` called per command) with a timeout: a
read that opened a FIFO would wait for a writer forever, and fail the whole fixture.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CHILD = textwrap.dedent(
    """
    import contextlib, io, json, sys
    from hookbus.runners.app._cli import main

    for argv in json.loads(sys.argv[1]):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(argv)
        print(json.dumps({"argv": argv, "code": code, "err": err.getvalue()}))
    """
)


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("kinds")
    made = {
        "folder.py": root / "folder.py",
        "fifo.py": root / "fifo.py",
        "fifo.toml": root / "fifo.toml",
        "fifo.msgpack": root / "fifo.msgpack",
        "folder.msgpack": root / "folder.msgpack",
        "file": root / "checkpoint_file",
        "fifo_checkpoint": root / "fifo_checkpoint",
    }
    made["folder.py"].mkdir()
    made["folder.msgpack"].mkdir()
    for name in ("fifo.py", "fifo.toml", "fifo.msgpack", "fifo_checkpoint"):
        os.mkfifo(made[name])
    made["file"].write_bytes(b"not a folder")
    return made


def commands(paths: dict[str, Path]) -> dict[str, tuple[list[str], str]]:
    """Each case: its command line and what the one line of stderr must say."""
    train = ["train", "--env", "CartPole-v1", "--iterations", "1"]
    return {
        "callbacks_folder": (
            [*train, "--callbacks", f"{paths['folder.py']}:Cb"],
            f"{str(paths['folder.py'])!r} is a directory, not a Python file",
        ),
        "callbacks_fifo": (
            [*train, "--callbacks", f"{paths['fifo.py']}:Cb"],
            f"{str(paths['fifo.py'])!r} is a FIFO (named pipe), not a Python file",
        ),
        "config_fifo": (
            [*train, "--config", str(paths["fifo.toml"])],
            f"--config {str(paths['fifo.toml'])!r} is a FIFO (named pipe), not a config file",
        ),
        "inspect_fifo": (
            ["inspect", str(paths["fifo.msgpack"])],
            f"{str(paths['fifo.msgpack'])!r} is a FIFO (named pipe), not a recording file",
        ),
        "replay_device": (
            ["replay", "/dev/null"],
            "'/dev/null' is a character device, not a recording file",
        ),
        "inspect_missing": (
            ["inspect", str(paths["folder.msgpack"] / "none.msgpack")],
            f"no such file {str(paths['folder.msgpack'] / 'none.msgpack')!r}",
        ),
        "evaluate_file": (
            ["evaluate", str(paths["file"])],
            f"no checkpoint at {str(paths['file'])!r}: it is a regular file; a checkpoint is "
            f"a directory holding algorithm_state.msgpack",
        ),
        "evaluate_fifo": (
            ["evaluate", str(paths["fifo_checkpoint"])],
            f"no checkpoint at {str(paths['fifo_checkpoint'])!r}: it is a FIFO (named pipe)",
        ),
    }


@pytest.fixture(scope="module")
def results(paths: dict[str, Path]) -> dict[str, dict[str, object]]:
    cases = commands(paths)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps([argv for argv, _ in cases.values()])],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return dict(zip(cases, lines, strict=True))


@pytest.mark.parametrize(
    "case",
    [
        "callbacks_folder",
        "callbacks_fifo",
        "config_fifo",
        "inspect_fifo",
        "replay_device",
        "inspect_missing",
        "evaluate_file",
        "evaluate_fifo",
    ],
)
def test_a_path_of_the_wrong_kind_is_named_in_one_line(
    paths: dict[str, Path], results: dict[str, dict[str, object]], case: str
) -> None:
    _, message = commands(paths)[case]
    result = results[case]
    assert result["code"] == 2, result
    err = str(result["err"])
    assert len(err.strip().splitlines()) == 1, err
    assert message in err
    if case != "inspect_missing":
        assert "no such file" not in err
