"""Shared fixtures: every async test runs on both anyio backends; small, fast configs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hookbus.runners import PPOConfig


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run each ``@pytest.mark.anyio`` test once on asyncio and once on trio."""
    return str(request.param)


@pytest.fixture
def small_ppo() -> PPOConfig:
    """PPO on CartPole with a tiny batch: an iteration takes a few milliseconds."""
    return (
        PPOConfig()
        .environment("CartPole-v1")
        .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
        .debugging(seed=0)
    )


def _write_in_place(path: Path, data: bytes) -> None:
    with open(path, "r+b" if path.exists() else "wb") as file:
        file.write(data)
        file.truncate()


@pytest.fixture
def write_in_place() -> Callable[[Path, bytes], None]:
    """Give ``write(path, data)``: ``path.write_bytes(data)`` over the file's old bytes.

    For tests that write a damaged copy thousands of times. ``write_bytes`` empties the file
    first, and ext4 (auto_da_alloc) then flushes it to disk at close: about 1.5 ms a write on
    the CI machine's disk, against 0.015 ms for writing over the bytes and cutting the rest.
    """
    return _write_in_place


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[None]:
    """A local Ray of 2 CPUs for the whole session; hookbus joins it (never starts its own)."""
    import ray  # the test extra installs hookbus[ray]: a missing Ray fails, never skips

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()
