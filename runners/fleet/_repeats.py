"""Failures that repeat: a runner failing the same way at the same point is a bug, not bad luck.

RLlib restarts a failed runner up to ``max_num_env_runner_restarts`` times (1000) and
raises only after ``num_consecutive_env_runner_failures_tolerance`` (100) failures in a
row, so an env that raises at every step is restarted for hours. hookbus stops at
``SAME_FAILURES_TO_STOP`` failures of one runner in a row that are alike
(``backends.failure_key``): the same type, message and origin in the user's code, and
the same *point*, the env steps the failing runner had sampled since it was made (0: in
its constructor, or before its first step).

A bug fails every new runner at the same point: at its first step, in its constructor,
at step 150 of its first long episode, with samples returned before or not. A random
crash (RLlib's CartPoleCrashing raises from one line with one message at random steps)
falls at a random point, so its failures differ, and only RLlib's settings bound them.
By chance, a crash with probability ``p`` per step falls at one point four times in a
row about once in ``4 / p**3`` failures (``p=0.01``: once in four million); three would
be once in ``3 / p**2`` (30,000), too often for a run to be stopped on, hence four. Any
other failure of the runner (a lost worker included) ends its row (docs/scaling.md,
Failures in a row).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ..backends import EnvRunnerHandle, describe_failure, failure_key

__all__ = ("SAME_FAILURES_TO_STOP", "Repeats", "warn_tolerated")

logger = logging.getLogger("hookbus")

SAME_FAILURES_TO_STOP = 4
"""A runner failing this many times in a row the same way at the same point stops
training with its error."""


@dataclass
class _Streak:
    """A runner's failures alike in a row: what they were (their point included), how many."""

    key: tuple[str, str, str, int | None]
    count: int = 0


class Repeats:
    """Count each runner's failures alike in a row (a ``RunnerHealth`` collaborator)."""

    def __init__(self, max_restarts: int) -> None:
        self._max_restarts = max_restarts  # named in the note: what stopping spares
        self._streaks: dict[int, _Streak] = {}  # worker index -> its row

    def count(self, runner: EnvRunnerHandle, exc: BaseException) -> int:
        """Count ``exc`` in ``runner``'s row of failures alike; return the row's length.

        A lost worker (no ``failure_key``) ends the row: 0. At ``SAME_FAILURES_TO_STOP``
        a note on ``exc`` says so, for the caller to raise it.
        """
        index, key = runner.worker_index, failure_key(exc)
        if key is None:
            self._streaks.pop(index, None)
            return 0
        streak = self._streaks.get(index)
        if streak is None or streak.key != key:
            streak = self._streaks[index] = _Streak(key=key)
        streak.count += 1
        if streak.count >= SAME_FAILURES_TO_STOP:
            exc.add_note(
                f"hookbus: env runner {index} failed the same way {streak.count} times in a "
                f"row, {point(key[3], each=True)} ({describe_failure(exc)}); a restart "
                f"would fail again, so training stops here instead of restarting it up to "
                f"max_num_env_runner_restarts={self._max_restarts} times (docs/scaling.md, "
                f"Failures in a row)"
            )
        return streak.count


def point(steps: int | None, *, each: bool = False) -> str:
    """Say where a runner failed: how many env steps after it was made (``failure_key``)."""
    lead = "each time " if each else ""
    if steps is None:
        return f"{lead}at a point it did not report"
    if steps == 0:
        return f"{lead}before its first env step"
    return f"{lead}{steps} env steps after it was made"


def warn_tolerated(lead: str, exc: BaseException, alike: int, *, then: str = "") -> None:
    """Log a failure training goes on after, ``lead`` first: with its type, message and
    origin, unless it repeats a row (``alike`` > 1), then only that it failed alike again,
    and where.

    Text only: a handler that keeps records (pytest's, a MemoryHandler) would keep the
    exception's traceback, and with it an in-process runner.
    """
    after = f"; {then}" if then else ""
    if alike > 1:
        key = failure_key(exc)
        logger.warning(
            "hookbus: %s the same way again, %s (%d times in a row; %d stop training)%s",
            lead,
            point(None if key is None else key[3]),
            alike,
            SAME_FAILURES_TO_STOP,
            after,
        )
    else:
        logger.warning("hookbus: %s%s: %s", lead, after, describe_failure(exc))
