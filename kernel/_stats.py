"""Bus statistics, handler timings, deadlines and the watchdog.

Counters that cost nothing per event (errors, quarantines) are always on. Timing a handler
costs two clock reads and a record per call, which bench/dispatch.py measures at well over
10% of the step path; so timings, deadlines and the watchdog live in a swapped, timed chain
(``_chain._timed``) that the bus compiles only when one of them is asked for
(``Bus(statistics=True)``, ``deadline=``, ``watchdog=``): never an ``if`` on the hot path.
"""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from ._chain import Handler
from ._errors import ConfigError

__all__ = ("BusStatistics", "HandlerStatistics", "Timings", "check_seconds")

logger = logging.getLogger("hookbus")

SAMPLES = 1024
"""Latencies kept per handler for its percentiles: the most recent calls."""


@dataclass(frozen=True, slots=True)
class HandlerStatistics:
    """One handler's calls and latency (``Bus(statistics=True)``); times in seconds."""

    calls: int
    """Calls that returned (or were cancelled at their deadline)."""
    p50: float
    """Median latency over the last ``SAMPLES`` (1024) calls."""
    p99: float
    overruns: int = 0
    """Calls past the handler's deadline (sync ones ran on; async ones were cancelled)."""


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
    __slots__ = ("calls", "handler", "overruns", "samples")

    def __init__(self, handler: Handler) -> None:
        self.handler = handler  # kept alive: records are keyed by its id
        self.calls = 0
        self.overruns = 0
        self.samples: deque[float] = deque(maxlen=SAMPLES)


class Timings:
    """A bus's timing options and records; makes the names a timed chain calls."""

    def __init__(self, *, statistics: bool, deadline: float | None, watchdog: float | None) -> None:
        self.statistics = statistics
        self.deadline = deadline
        self.watchdog = watchdog
        # By (hook, id(handler)): a stream's one feeder is in several hooks' chains.
        self._records: dict[tuple[str, int], _Record] = {}

    def deadline_of(self, handler: Handler) -> float | None:
        """Return ``handler``'s deadline: its own, else the bus's."""
        return handler.deadline if handler.deadline is not None else self.deadline

    def wanted(self, handlers: Sequence[Handler]) -> bool:
        """Tell whether a chain of ``handlers`` must be the timed one."""
        return self.statistics or self.watchdog is not None or any(map(self.deadline_of, handlers))

    def names(self, hook: str, handlers: Sequence[Handler]) -> dict[str, Any]:
        """Return ``_clock``, ``_done``, ``_timeout`` and ``_move_on_after`` for one chain."""
        records = [self._record(hook, h) for h in handlers]
        deadlines = [self.deadline_of(h) for h in handlers]
        watchdog, statistics = self.watchdog, self.statistics

        def done(i: int, seconds: float) -> None:
            record = records[i]
            if statistics:
                record.calls += 1
                record.samples.append(seconds)
            deadline = deadlines[i]
            if deadline is not None and seconds > deadline and not record.handler.is_async:
                record.overruns += 1
                logger.warning(
                    "hookbus: sync handler %s of hook %r ran %.3f s, past its deadline of "
                    "%s s (a sync handler cannot be interrupted)",
                    record.handler.name,
                    hook,
                    seconds,
                    deadline,
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
            records[i].overruns += 1
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

    def snapshot(self) -> dict[str, dict[str, HandlerStatistics]]:
        """Return per hook, per handler name, the calls and latency percentiles so far."""
        out: dict[str, dict[str, HandlerStatistics]] = {}
        for (hook, _), record in self._records.items():
            if not record.calls and not record.overruns:
                continue
            samples = sorted(record.samples)
            stats = HandlerStatistics(
                record.calls, _percentile(samples, 50), _percentile(samples, 99), record.overruns
            )
            out.setdefault(hook, {})[record.handler.name] = stats
        return out

    def _record(self, hook: str, handler: Handler) -> _Record:
        key = (hook, id(handler))
        if key not in self._records:
            self._records[key] = _Record(handler)
        return self._records[key]


def _percentile(samples: list[float], q: int) -> float:
    if not samples:
        return math.nan
    return samples[min(len(samples) - 1, (len(samples) * q) // 100)]
