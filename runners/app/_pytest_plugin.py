"""hookbus's pytest plugin (entry point ``pytest11``): fixtures for testing your callbacks.

- ``hookbus_bus``: an open, empty Bus, closed after the test.
- ``hookbus_recording``: the path of a recording of a small real run (PPO on CartPole-v1,
  seed 0, two iterations of 500 env steps, every hook), made once per test session.
- ``hookbus_replay``: a function replaying a recording into callbacks and returning what they
  produced (a ``ReplayResult``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from hookbus.kernel import Bus, Recorder, replay
from hookbus.metrics import MetricsLogger, results

__all__ = ("ReplayResult", "hookbus_bus", "hookbus_recording", "hookbus_replay")


@dataclass(frozen=True)
class ReplayResult:
    """What replaying a recording into callbacks produced."""

    events: int
    """How many events were published."""
    metrics: dict[str, Any]
    """The metrics the callbacks logged, as a nested results dict (plain values)."""
    logger: MetricsLogger
    callbacks: tuple[object, ...]
    """The callback instances, in chain order, to inspect their state."""


def replay_into(
    source: str | os.PathLike[str],
    callbacks: object = None,
    *,
    backend: str = "asyncio",
    hooks: Collection[str] | None = None,
    sources: Collection[str] | None = None,
    **bus_options: Any,
) -> ReplayResult:
    """Replay ``source`` into ``callbacks`` (as ``config.callbacks`` takes them), synchronously.

    ``hooks`` and ``sources`` filter what is published (see ``hookbus.kernel.replay``); the
    other keywords go to the Bus (``on_error=``, per-hook callables).
    """
    logger = MetricsLogger()
    bus = Bus(callbacks, **bus_options)

    async def run() -> int:
        return await replay(source, bus=bus, metrics_logger=logger, hooks=hooks, sources=sources)

    try:
        count = anyio.run(run, backend=backend)
    finally:
        bus.close()
    return ReplayResult(count, results(logger), logger, bus.callbacks)


@pytest.fixture
def hookbus_bus() -> Iterator[Bus]:
    """Give an open, empty Bus; it is closed after the test."""
    with Bus() as bus:
        yield bus


@pytest.fixture(scope="session")
def hookbus_recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Record a small real run once per session and give the file's path."""
    from hookbus.runners import PPOConfig

    path = tmp_path_factory.mktemp("hookbus") / "ppo_cartpole.msgpack"
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .training(train_batch_size=500, minibatch_size=100, num_epochs=2)
        .callbacks(Recorder(path))
        .debugging(seed=0)
    )
    with config.build() as algo:
        algo.train()
        algo.train()
    return path


@pytest.fixture
def hookbus_replay() -> Callable[..., ReplayResult]:
    """Give ``replay(source, callbacks, backend="asyncio", hooks=None, sources=None,
    **bus_options) -> ReplayResult``."""
    return replay_into
