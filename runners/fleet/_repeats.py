"""Failures that repeat: a runner failing the same way in a row is a bug, not bad luck.

RLlib restarts a failed runner up to ``max_num_env_runner_restarts`` times (1000) and
raises only after ``num_consecutive_env_runner_failures_tolerance`` (100) failures in a
row, so an env that raises at every step is restarted for hours. hookbus stops at
``SAME_FAILURES_TO_STOP`` failures of one runner that are alike (``backends.failure_key``:
type, message and origin in the user's code) with no sample of that runner in between;
other failures count only towards RLlib's settings (docs/scaling.md, Failures in a row).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ..backends import EnvRunnerHandle, describe_failure, failure_key

__all__ = ("SAME_FAILURES_TO_STOP", "Repeats", "warn_tolerated")

logger = logging.getLogger("hookbus")

SAME_FAILURES_TO_STOP = 3
"""A runner failing this many times in a row the same way, with no sample returned in
between, stops training with its error."""


@dataclass
class _Streak:
    """A runner's failures alike in a row: what they were, how many, and the runner's
    ``samples_returned`` when they began (a sample since breaks the row)."""

    key: tuple[str, str, str]
    samples: int
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
        if streak is None or streak.key != key or streak.samples != runner.samples_returned:
            streak = self._streaks[index] = _Streak(key=key, samples=runner.samples_returned)
        streak.count += 1
        if streak.count >= SAME_FAILURES_TO_STOP:
            exc.add_note(
                f"hookbus: env runner {index} failed the same way {streak.count} times in a "
                f"row, with no sample returned in between ({describe_failure(exc)}); a restart "
                f"would fail again, so training stops here instead of restarting it up to "
                f"max_num_env_runner_restarts={self._max_restarts} times (docs/scaling.md, "
                f"Failures in a row)"
            )
        return streak.count


def warn_tolerated(lead: str, exc: BaseException, alike: int, *, then: str = "") -> None:
    """Log a failure training goes on after, ``lead`` first: with its type, message and
    origin, unless it repeats a row (``alike`` > 1), then only that it failed alike again.

    Text only: a handler that keeps records (pytest's, a MemoryHandler) would keep the
    exception's traceback, and with it an in-process runner.
    """
    after = f"; {then}" if then else ""
    if alike > 1:
        logger.warning(
            "hookbus: %s the same way again (%d times in a row; %d stop training)%s",
            lead,
            alike,
            SAME_FAILURES_TO_STOP,
            after,
        )
    else:
        logger.warning("hookbus: %s%s: %s", lead, after, describe_failure(exc))
