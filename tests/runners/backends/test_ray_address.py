"""Which Ray hookbus uses when none is initialised: its own, or RAY_ADDRESS's, never a stale one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent(
    """
    from hookbus.runners import PPOConfig

    if __name__ == "__main__":
        config = (
            PPOConfig().environment("CartPole-v1")
            .env_runners(num_env_runners=1, backend="ray", num_cpus_per_env_runner=0)
            .training(train_batch_size=100, minibatch_size=50, num_epochs=1)
        )
        with config.build() as algo:
            print("trained", algo.train()["training_iteration"])
    """
)
STALE = "127.0.0.1:1"  # nothing listens there: a cluster recorded long ago


@pytest.fixture
def stale_record() -> Iterator[Path]:
    """A Ray temp dir (short: Ray's socket paths must fit) recording a cluster that is gone."""
    root = Path(tempfile.mkdtemp(prefix="hbray", dir="/tmp"))
    (root / "ray").mkdir()
    (root / "ray" / "ray_current_cluster").write_text(STALE)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def run(root: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], float]:
    script = root / "train_on_ray.py"
    script.write_text(SCRIPT)
    environment = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    environment.update(RAY_TMPDIR=str(root), **env)
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=240, env=environment
    )
    return done, time.monotonic() - start


def test_without_an_address_hookbus_starts_its_own_ray_not_a_recorded_one(
    stale_record: Path,
) -> None:
    done, _ = run(stale_record)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "trained 1" in done.stdout


def test_an_unreachable_ray_address_fails_with_one_line_naming_it(stale_record: Path) -> None:
    # Nothing ever listens at STALE: the whole timeout is waited, whatever its length.
    done, took = run(stale_record, RAY_ADDRESS=STALE, HOOKBUS_RAY_CONNECT_TIMEOUT_S="1")
    assert done.returncode != 0
    line = [entry for entry in done.stderr.splitlines() if "cannot reach the Ray cluster" in entry]
    assert line, done.stderr[-2000:]
    assert f"at '{STALE}' (RAY_ADDRESS)" in line[-1]
    assert "unset RAY_ADDRESS to have hookbus start a local Ray" in line[-1]
    assert took < 120  # not Ray's own wait of minutes
