"""Hostile checkpoints under a memory cap: every read bounded, no network built past its bound.

A state file that is a link to ``/dev/zero``, a FIFO nobody writes, a sparse file of 3 GiB,
and a file of a few kB whose model config asks for billions of weights: each is loaded
through every door that reads checkpoints (``RLModule.from_checkpoint``,
``Algorithm.from_checkpoint``, ``restore_from_path``, ``hookbus evaluate``) in one child
process whose address space is capped (``RLIMIT_AS``) at what it uses once set up, plus
1 GiB. Reading any of those files whole, or allocating any of those networks, would be a
MemoryError there (or, for the FIFO, a wait past the timeout); each must be one
ConfigError naming the file and the bound.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from hookbus.events import codec
from hookbus.runners import PPOConfig

STATE = "algorithm_state.msgpack"
MODULE = Path("learner_group", "learner", "rl_module", "default_policy")
HEADROOM = 2**30  # over what the child uses once set up: less than any hostile file asks

# Sets up (imports, an Algorithm to restore into), caps its address space, then loads
# each case through each door and prints one JSON line per attempt.
CHILD = textwrap.dedent(
    """
    import contextlib, io, json, resource, sys, time
    from pathlib import Path
    from hookbus.kernel import ConfigError
    from hookbus.runners import Algorithm, PPOConfig, RLModule
    from hookbus.runners.app._cli import main

    cases, headroom = json.loads(sys.argv[1]), int(sys.argv[2])
    config = PPOConfig().environment("CartPole-v1").training(
        train_batch_size=64, minibatch_size=32, num_epochs=1
    )
    algo = config.build()

    def status(key):
        line = next(l for l in open("/proc/self/status") if l.startswith(key + ":"))
        return int(line.split()[1]) * 1024

    cap = status("VmSize") + headroom
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    def module(path):
        RLModule.from_checkpoint(Path(path) / "learner_group/learner/rl_module/default_policy")

    def from_checkpoint(path):
        Algorithm.from_checkpoint(path).stop()

    def evaluate(path):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = main(["evaluate", path, "--episodes", "1"])
        raise SystemExit(f"exit {code}: {err.getvalue()}")

    doors = {"module": module, "from_checkpoint": from_checkpoint,
             "restore": algo.restore_from_path, "evaluate": evaluate}
    for case, path, names in cases:
        for name in names:
            start = time.perf_counter()
            try:
                doors[name](path)
                outcome, message = "loaded", ""
            except ConfigError as exc:
                outcome, message = "ConfigError", str(exc)
            except SystemExit as exc:
                outcome, message = "exit", str(exc.code)
            except BaseException as exc:
                outcome, message = type(exc).__name__, str(exc)[:300]
            print(json.dumps({"case": case, "door": name, "outcome": outcome,
                              "message": message, "seconds": time.perf_counter() - start}))
    try:
        bytearray(2 * headroom)
        held = False
    except MemoryError:
        held = True
    print(json.dumps({"cap_held": held, "cap": cap, "peak_rss": status("VmHWM")}))
    """
)

READ_DOORS = ["module", "from_checkpoint", "restore", "evaluate"]
BUILD_DOORS = ["module", "from_checkpoint", "evaluate"]  # a restore builds no network


def rewrite_body(checkpoint: Path, change: Any) -> None:
    """Change the state in ``checkpoint``'s file through ``change(state)``, checksum right."""
    envelope = codec.decode_msgpack((checkpoint / STATE).read_bytes())
    state = codec.decode_msgpack(envelope["body"])
    change(state)
    body = codec.encode_msgpack(state)
    envelope = {"version": 2, "sha256": hashlib.sha256(body).digest(), "body": body}
    (checkpoint / STATE).write_bytes(codec.encode_msgpack(envelope))


def ask_for(checkpoint: Path, hiddens: list[int]) -> None:
    """Make ``checkpoint``'s stored config and module file ask for ``hiddens``."""
    file = checkpoint / MODULE / "module_state.msgpack"
    record = codec.decode_msgpack(file.read_bytes())
    record["model_config"]["fcnet_hiddens"] = hiddens
    file.write_bytes(codec.encode_msgpack(record))
    rewrite_body(
        checkpoint,
        lambda state: state["config"]["settings"]["rl_module"].update(
            model_config={"fcnet_hiddens": hiddens}
        ),
    )


def replace_state_files(checkpoint: Path, plant: Any) -> None:
    """Put ``plant(path)`` in place of the checkpoint's file and its module's file."""
    for file in (checkpoint / STATE, checkpoint / MODULE / "module_state.msgpack"):
        file.unlink()
        plant(file)


def sparse(path: Path) -> None:
    with open(path, "wb") as out:
        out.truncate(3 * 2**30)


HOSTILE_FILES = {
    "dev_zero": lambda path: os.symlink("/dev/zero", path),
    "fifo": os.mkfifo,
    "sparse_3_gib": sparse,
}
MESSAGES = {
    "dev_zero": r"is a link to a character device \('/dev/zero'\), not a regular file",
    "fifo": r"is a FIFO \(named pipe\), not a regular file",
    "sparse_3_gib": r"holds 3,221,225,472 bytes \(3 GiB\), more than the 1,073,741,824 bytes "
    r"\(1 GiB\) that hookbus reads from one \(MAX_CHECKPOINT_BYTES\)",
}
NETWORKS = {
    "hiddens_8192x32": [8192] * 32,  # within each layer's bound: 2 billion weights together
    "hiddens_1e6x2": [10**6, 10**6],  # 7 TiB; past each layer's bound
}
NETWORK_MESSAGES = {
    "hiddens_8192x32": r"fcnet_hiddens \[8192\] \* 32 asks for 2,080,628,736 parameters "
    r"between its hidden layers alone, more than the 20,000,000 a module may have "
    r"\(MAX_PARAMETERS\)",
    "hiddens_1e6x2": r"fcnet_hiddens must be a list of 1 to 32 layer sizes, each an int in "
    r"\[1, 8192\], got \[1000000, 1000000\]",
}


@pytest.fixture(scope="module")
def attempts(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], dict[str, Any]]:
    """Load every hostile checkpoint through every door in one capped child process."""
    root = tmp_path_factory.mktemp("hostile")
    config = PPOConfig().environment("CartPole-v1").training(train_batch_size=64, minibatch_size=32)
    with config.build() as algo:
        good = algo.save_to_path(root / "good")
    cases = []
    for name, plant in HOSTILE_FILES.items():
        shutil.copytree(good, root / name)
        replace_state_files(root / name, plant)
        cases.append((name, str(root / name), READ_DOORS))
    for name, hiddens in NETWORKS.items():
        shutil.copytree(good, root / name)
        ask_for(root / name, hiddens)
        cases.append((name, str(root / name), BUILD_DOORS))
    cases.append(("good", str(good), READ_DOORS))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(cases), str(HEADROOM)],
        capture_output=True,
        text=True,
        timeout=180,  # a FIFO read that waits for a writer never ends: this fails it
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    *tried, summary = lines
    assert summary["cap_held"], summary  # the cap is real: 2 GiB more cannot be had
    return {(line["case"], line["door"]): line for line in tried}


@pytest.mark.parametrize("door", READ_DOORS)
@pytest.mark.parametrize("case", HOSTILE_FILES)
def test_a_state_file_that_is_no_bounded_regular_file_is_refused_unread(
    attempts: dict[tuple[str, str], dict[str, Any]], case: str, door: str
) -> None:
    attempt = attempts[case, door]
    if door == "evaluate":  # the CLI: one line, exit status 2
        assert attempt["outcome"] == "exit", attempt
        code, _, err = attempt["message"].partition(": ")
        assert code == "exit 2"
        assert len(err.strip().splitlines()) == 1
        message = err
    else:
        assert attempt["outcome"] == "ConfigError", attempt
        message = attempt["message"]
    file = "module file" if door == "module" else "checkpoint file"
    assert f"{file} '" in message
    assert case in message  # the file's path names its case's folder
    assert re.search(MESSAGES[case], message), message


@pytest.mark.parametrize("door", BUILD_DOORS)
@pytest.mark.parametrize("case", NETWORKS)
def test_a_small_file_asking_for_a_huge_network_is_refused_before_allocating(
    attempts: dict[tuple[str, str], dict[str, Any]], case: str, door: str
) -> None:
    attempt = attempts[case, door]
    if door == "evaluate":
        assert attempt["outcome"] == "exit", attempt
        code, _, message = attempt["message"].partition(": ")
        assert code == "exit 2"
        assert len(message.strip().splitlines()) == 1
    else:
        assert attempt["outcome"] == "ConfigError", attempt
        message = attempt["message"]
    assert case in message  # names the file or the checkpoint
    assert re.search(NETWORK_MESSAGES[case], message), message


@pytest.mark.parametrize("door", READ_DOORS)
def test_a_good_checkpoint_still_loads_under_the_same_cap(
    attempts: dict[tuple[str, str], dict[str, Any]], door: str
) -> None:
    attempt = attempts["good", door]
    expected = "exit" if door == "evaluate" else "loaded"
    assert attempt["outcome"] == expected, attempt
    if door == "evaluate":
        assert attempt["message"].startswith("exit 0")
