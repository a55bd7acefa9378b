"""Replaying a recording into callbacks from sync code, and collecting the metrics they log.

The pytest plugin's ``hookbus_replay`` fixture and ``hookbus replay`` both wrap
``replay_into``; it lives here, in the kernel, so that neither needs the other (pytest is a
test dependency only).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from hookbus.events import BaseEvent

from ._bus import Bus
from ._errors import ConfigError
from ._replay import Kept, replay_and_keep

if TYPE_CHECKING:  # metrics (and numpy) load when a replay runs
    from hookbus.metrics import MetricsLogger

__all__ = ("ReplayResult", "replay_into")


@dataclass(frozen=True)
class ReplayResult:
    """What replaying a recording into callbacks produced."""

    events: int
    """How many events were published."""
    metrics: dict[str, Any]
    """The metrics the callbacks logged, as a nested results dict (plain values): the
    logger's at the end, or under RLlib's cycle the last iteration's."""
    logger: MetricsLogger | Any
    """The MetricsLogger the callbacks logged into (under RLlib's cycle, the Algorithm's:
    a stand-in for RLlib's own)."""
    callbacks: tuple[object, ...]
    """The callback instances, in chain order, to inspect their state."""
    iterations: list[dict[str, Any]] = field(default_factory=list)
    """Each recorded iteration's results (one per ``on_train_result``), as the recording's
    producer reported them: ``iterations[i]["env_runners"][key]`` for RLlib's."""


def replay_into(
    source: str | os.PathLike[str] | Iterable[BaseEvent],
    callbacks: object = None,
    *,
    backend: str = "asyncio",
    hooks: Collection[str] | None = None,
    sources: Collection[str] | None = None,
    metrics_logger: MetricsLogger | None = None,
    types: Iterable[type[BaseEvent]] = (),
    merge: str = "framework",
    producer: str | None = None,
    **bus_options: Any,
) -> ReplayResult:
    """Replay ``source`` into ``callbacks`` (as ``config.callbacks`` takes them), synchronously.

    Runs ``replay`` on a fresh event loop of ``backend`` ("asyncio" or "trio"). ``hooks`` and
    ``sources`` filter what is published; ``types`` are event types of yours the recording
    holds (``read_recording``); the other keywords go to the Bus (``on_error=``, per-hook
    callables). A damaged recording raises RecordingError after its valid prefix was
    published: pass your own ``metrics_logger`` to keep what the callbacks logged until then.
    ``iterations`` are the results of each recorded iteration, following the reduce cycle
    of the recording's producer (``merge="framework"``) or one logger for every event
    (``merge="pooled"``: the true mean over every value); ``producer`` names it for an
    iterable ``source`` or an older file (``replay``).
    Another ``backend``, or "trio" without trio installed, is a ConfigError saying so.
    """
    if backend not in ("asyncio", "trio"):
        raise ConfigError(f"replay_into() runs on backend 'asyncio' or 'trio', not {backend!r}")
    bus = Bus(callbacks, **bus_options)
    kept: list[Kept] = []
    started = False  # whether anyio got as far as running the replay

    async def run() -> int:
        nonlocal started
        started = True
        found = await replay_and_keep(
            source,
            bus=bus,
            metrics_logger=metrics_logger,
            hooks=hooks,
            sources=sources,
            types=types,
            merge=merge,
            producer=producer,
        )
        kept.append(found)
        return found.published

    try:
        count = anyio.run(run, backend=backend)
    except LookupError as exc:
        if started:  # a callback's own KeyError, say
            raise
        # anyio could not load the event loop (trio missing): its message names anyio's
        # extra; hookbus's is the one to install.
        raise ConfigError(
            f"replay_into(backend={backend!r}) needs {backend}, which cannot be imported: "
            f'pip install "hookbus[trio]"'
        ) from exc
    finally:
        bus.close()
    return _result(count, kept[0], bus.callbacks)


def _result(count: int, kept: Kept, callbacks: tuple[object, ...]) -> ReplayResult:
    """Return the ``ReplayResult``: from the rules' outcome if some report one (the first
    with iterations, else the first), else from the logger alone."""
    from hookbus.metrics import results

    outcomes = [state.outcome() for state in kept.states if hasattr(state, "outcome")]
    found = next((o for o in outcomes if o.iterations), outcomes[0] if outcomes else None)
    if found is None:
        return ReplayResult(count, results(kept.logger), kept.logger, callbacks)
    metrics = results(kept.logger) if found.metrics is None else found.metrics
    logger = kept.logger if found.logger is None else found.logger
    return ReplayResult(count, metrics, logger, callbacks, found.iterations)
