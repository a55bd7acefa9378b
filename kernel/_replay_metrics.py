"""Replaying a recording into callbacks from sync code, and collecting the metrics they log.

The pytest plugin's ``hookbus_replay`` fixture and ``hookbus replay`` both wrap
``replay_into``; it lives here, in the kernel, so that neither needs the other (pytest is a
test dependency only).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

import anyio

from hookbus.events import BaseEvent
from hookbus.metrics import MetricsLogger, results

from ._bus import Bus
from ._replay import replay

__all__ = ("ReplayResult", "replay_into")


@dataclass(frozen=True)
class ReplayResult:
    """What replaying a recording into callbacks produced."""

    events: int
    """How many events were published."""
    metrics: dict[str, Any]
    """The metrics the callbacks logged, as a nested results dict (plain values)."""
    logger: MetricsLogger
    """The MetricsLogger the callbacks logged into."""
    callbacks: tuple[object, ...]
    """The callback instances, in chain order, to inspect their state."""


def replay_into(
    source: str | os.PathLike[str] | Iterable[BaseEvent],
    callbacks: object = None,
    *,
    backend: str = "asyncio",
    hooks: Collection[str] | None = None,
    sources: Collection[str] | None = None,
    metrics_logger: MetricsLogger | None = None,
    types: Iterable[type[BaseEvent]] = (),
    **bus_options: Any,
) -> ReplayResult:
    """Replay ``source`` into ``callbacks`` (as ``config.callbacks`` takes them), synchronously.

    Runs ``replay`` on a fresh event loop of ``backend`` ("asyncio" or "trio"). ``hooks`` and
    ``sources`` filter what is published; ``types`` are event types of yours the recording
    holds (``read_recording``); the other keywords go to the Bus (``on_error=``, per-hook
    callables). A damaged recording raises RecordingError after its valid prefix was
    published: pass your own ``metrics_logger`` to keep what the callbacks logged until then.
    """
    logger = metrics_logger if metrics_logger is not None else MetricsLogger()
    bus = Bus(callbacks, **bus_options)

    async def run() -> int:
        return await replay(
            source, bus=bus, metrics_logger=logger, hooks=hooks, sources=sources, types=types
        )

    try:
        count = anyio.run(run, backend=backend)
    finally:
        bus.close()
    return ReplayResult(count, results(logger), logger, bus.callbacks)
