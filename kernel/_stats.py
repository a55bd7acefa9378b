"""Bus statistics, handler timings, deadlines and the watchdog.

Counters that cost nothing per event (errors, quarantines) are always on. The rest is
compiled into the chain only when asked for, never an ``if`` on the hot path:

- ``statistics=True``: the chain counts its publishes (one C call, ``_tick``) and runs a
  timed twin for one publish in ``SAMPLE_EVERY``, so per-handler call counts are exact and
  latencies are sampled. Timing every call (two clock reads and a record per handler) cost
  about +75% on bench/dispatch.py's step path; sampled, the whole costs a few percent.
- ``deadline=`` and ``watchdog=`` need every call timed: their chains are the timed ones.
"""

from __future__ import annotations

import itertools
import logging
import math
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from ._chain import ChainTiming, Handler
from ._errors import ConfigError

__all__ = ("BusStatistics", "HandlerStatistics", "Timings", "check_seconds")

logger = logging.getLogger("hookbus")

SAMPLES = 1024
"""Latencies kept per handler for its percentiles: the most recent calls."""


@dataclass(frozen=True, slots=True)
class HandlerStatistics:
    """One handler's calls and latency (``Bus(statistics=True)``); times in seconds."""

    calls: int
    """Calls so far, exact (those that raised or were cancelled included)."""
    p50: float
    """Median latency over the last ``SAMPLES`` (1024) timed calls (NaN before the first).

    With statistics alone, the first publish and then one in ``SAMPLE_EVERY`` (64) is
    timed, every handler of its chain; with a deadline or the watchdog, every call. A call
    cancelled at its deadline counts as lasting its deadline: it ran that long, at least.
    """
    p99: float
    overruns: int = 0
    """Calls past the handler's deadline: sync ones ran on; async ones were cancelled, or
    ran on too when they blocked the event loop (never awaited), which nothing can cancel."""


@dataclass(frozen=True, slots=True)
class BusStatistics:
    """A snapshot of a bus's counters."""

    subscribers: dict[str, int]
    """Handlers per hook (hooks with none left out)."""
    errors: int
    """Handler exceptions so far (logged, collected and quarantining ones included)."""
    errors_by_hook: dict[str, int]
    quarantined: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Per hook, the handlers ``on_error="quarantine"`` unsubscribed, in that order."""
    handlers: dict[str, dict[str, HandlerStatistics]] = field(default_factory=dict)
    """Per hook, per handler name: calls and latency; empty unless ``statistics=True``."""


def check_seconds(value: object, what: str) -> float | None:
    """Return ``value`` (None, or a finite number of seconds > 0) or raise ConfigError."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ConfigError(f"{what} must be None or a number of seconds > 0, got {value!r}")
    if not math.isfinite(value):
        raise ConfigError(f"{what} must be None or a number of seconds > 0, got {value!r}")
    return float(value)


class _Record:
    __slots__ = ("calls", "handler", "overruns", "samples", "skipped")

    def __init__(self, handler: Handler) -> None:
        self.handler = handler  # kept alive: records are keyed by its id
        self.calls = 0  # publishes of chains it has left (``Timings._fold``)
        self.skipped = 0  # publishes that stopped before reaching it (``_cut``)
        self.overruns = 0
        self.samples: deque[float] = deque(maxlen=SAMPLES)


class _Live:
    """One compiled, counted chain: its publish counter and its handlers' records."""

    __slots__ = ("counter", "records")

    def __init__(self, records: list[_Record]) -> None:
        self.counter = itertools.count()
        self.records = records

    def publishes(self) -> int:
        # itertools.count shows its next value only in its repr, "count(N)"; reading it
        # there keeps the hot path one C call (``_tick``) instead of a list update.
        return int(repr(self.counter)[6:-1])


class Timings:
    """A bus's timing options and records; plans each chain's timing (``ChainTiming``)."""

    def __init__(self, *, statistics: bool, deadline: float | None, watchdog: float | None) -> None:
        self.statistics = statistics
        self.deadline = deadline
        self.watchdog = watchdog
        # By (hook, id(handler)): a stream's one feeder is in several hooks' chains.
        self._records: dict[tuple[str, int], _Record] = {}
        # By chain key (the hook's full chain or its observers'): the chain compiled now.
        self._live: dict[tuple[str, str], _Live] = {}

    def deadline_of(self, handler: Handler) -> float | None:
        """Return ``handler``'s deadline: its own, else the bus's."""
        return handler.deadline if handler.deadline is not None else self.deadline

    def plan(self, key: tuple[str, str], handlers: Sequence[Handler]) -> ChainTiming | None:
        """Return how to time the chain ``key`` (``(hook, part)``) now made of ``handlers``.

        None: no clock and no counter. The chain it replaces stops counting here.
        """
        self._fold(key)
        hook = key[0]
        deadlines = [self.deadline_of(h) for h in handlers]
        every_call = self.watchdog is not None or any(d is not None for d in deadlines)
        if not handlers or not (every_call or self.statistics):
            return None
        records = [self._record(hook, h) for h in handlers]
        names = self._names(hook, handlers, records, deadlines)
        if self.statistics:
            live = self._live[key] = _Live(records)
            names["_tick"] = live.counter.__next__

            def cut(index: int) -> None:
                for record in records[index + 1 :]:
                    record.skipped += 1

            names["_cut"] = cut
        return ChainTiming(names, deadlines, every_call=every_call, counted=self.statistics)

    def snapshot(self) -> dict[str, dict[str, HandlerStatistics]]:
        """Return per hook, per handler name, the calls and latency percentiles so far."""
        calls = {id(r): r.calls - r.skipped for r in self._records.values()}
        for live in self._live.values():
            n = live.publishes()
            for record in live.records:
                calls[id(record)] += n
        out: dict[str, dict[str, HandlerStatistics]] = {}
        for (hook, _), record in self._records.items():
            if not calls[id(record)] and not record.overruns:
                continue
            samples = sorted(record.samples)
            p50, p99 = _percentile(samples, 50), _percentile(samples, 99)
            stats = HandlerStatistics(calls[id(record)], p50, p99, record.overruns)
            out.setdefault(hook, {})[record.handler.name] = stats
        return out

    def _names(
        self,
        hook: str,
        handlers: Sequence[Handler],
        records: list[_Record],
        deadlines: list[float | None],
    ) -> dict[str, Any]:
        """Return ``_clock``, ``_done``, ``_timeout`` and ``_move_on_after`` for one chain."""
        watchdog, statistics = self.watchdog, self.statistics

        def done(i: int, seconds: float) -> None:
            record = records[i]
            if statistics:
                record.samples.append(seconds)
            deadline = deadlines[i]
            # Reached only by calls that were not cancelled: an async handler past its
            # deadline here blocked the event loop (time.sleep, a busy loop), so its cancel
            # scope could never fire; it is reported as a sync handler's overrun is.
            if deadline is not None and seconds > deadline:
                record.overruns += 1
                logger.warning(
                    "hookbus: %s handler %s of hook %r ran %.3f s, past its deadline of %s s (%s)",
                    "async" if record.handler.is_async else "sync",
                    record.handler.name,
                    hook,
                    seconds,
                    deadline,
                    _RAN_ON[record.handler.is_async],
                )
            if watchdog is not None and seconds > watchdog:
                logger.warning(
                    "hookbus: watchdog: handler %s of hook %r ran %.3f s (threshold %s s)",
                    record.handler.name,
                    hook,
                    seconds,
                    watchdog,
                )

        def timeout(i: int) -> None:
            record = records[i]
            record.overruns += 1
            deadline = deadlines[i]
            if statistics and deadline is not None:  # cancelled at its deadline: it ran that long
                record.samples.append(deadline)
            raise TimeoutError(
                f"hookbus: handler {handlers[i].name} of hook {hook!r} ran past its deadline "
                f"of {deadlines[i]} s and was cancelled"
            )

        return {
            "_clock": time.perf_counter,
            "_done": done,
            "_timeout": timeout,
            "_move_on_after": anyio.move_on_after,
        }

    def _fold(self, key: tuple[str, str]) -> None:
        """Add the publishes of chain ``key``, about to be replaced, to its handlers' calls."""
        live = self._live.pop(key, None)
        if live is not None:
            n = live.publishes()
            for record in live.records:
                record.calls += n

    def _record(self, hook: str, handler: Handler) -> _Record:
        key = (hook, id(handler))
        if key not in self._records:
            self._records[key] = _Record(handler)
        return self._records[key]


_RAN_ON = {
    False: "a sync handler cannot be interrupted",
    True: "it blocked the event loop without awaiting, so it could not be cancelled",
}


def _percentile(samples: list[float], q: int) -> float:
    if not samples:
        return math.nan
    return samples[min(len(samples) - 1, (len(samples) * q) // 100)]
