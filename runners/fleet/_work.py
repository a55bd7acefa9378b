"""Spreading work over a group's runners: the one scheduler behind sampling and evaluation.

Training's ``EnvRunnerGroup.sample()`` and an evaluation round both hand units of work (env
steps or episodes) to the runners in service, take a failed runner's share back for the
others, and restart failed runners when none is left. ``spread(group, work)`` does that for
both; a ``Work`` says how to ask one runner, what a result counts for, and how the units
reach the runners (``Waves``, ``Units`` or ``Until``). How a failure is judged stays with
``RunnerHealth`` (``config.fault_tolerance()``); what is asked stays with the caller.

Scheduling is per request, never per env step: a runner samples its share on its own.
"""

from __future__ import annotations

import functools
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import anyio

from ..backends import EnvRunnerHandle
from ._faults import collect

if TYPE_CHECKING:
    from ._health import RunnerHealth

__all__ = ("Units", "Until", "Waves", "Work", "spread")

T = TypeVar("T")
R = TypeVar("R")


class WorkingGroup(Protocol):
    """What spreading work uses of an ``EnvRunnerGroup`` (``_group``, which calls it): the
    health of its runners, the weights a restarted one gets, and how it settles outcomes."""

    health: RunnerHealth

    def current_weights(self) -> dict[str, Any]: ...

    async def _settle(
        self, runners: Sequence[EnvRunnerHandle], outcomes: Sequence[R | Exception]
    ) -> list[tuple[EnvRunnerHandle, R]]: ...


@dataclass(frozen=True, slots=True)
class Waves:
    """Split what is left of ``total`` over the runners in service, wait for all, repeat.

    ``split(left, k)`` gives the ``k`` runners' shares (a share of 0 asks nothing).
    """

    total: int
    split: Callable[[int, int], list[int]]


class Units:
    """A budget cut into units that free runners pull one at a time; a failed one goes back."""

    def __init__(self, units: Sequence[int]) -> None:
        self.total = sum(units)
        self._units = deque(units)

    def take(self, runner_began: bool) -> int | None:
        """Return the next unit, or None when none is waiting."""
        return self._units.popleft() if self._units else None

    def give_back(self, share: int) -> None:
        """Queue a failed runner's unit again, for the next free runner."""
        self._units.append(share)

    @property
    def left(self) -> int:
        """The units waiting for a runner."""
        return sum(self._units)


class Until:
    """No budget but a time: each runner does one unit at least, then more while ``more()``.

    Units are handed out unsized (a share of 0): ``ask`` sizes each one when it starts, from
    the time left then (a runner may first wait for its turn). A failed unit is not redone.
    """

    total = None
    left = 0  # nothing is owed: when every runner failed, the work ends

    def __init__(self, more: Callable[[], bool]) -> None:
        self._more = more

    def take(self, runner_began: bool) -> int | None:
        """Return a unit for a free runner (0: sized by ``ask``), or None once time is up."""
        return 0 if not runner_began or self._more() else None

    def give_back(self, share: int) -> None:
        """Drop a failed runner's unit: there is no budget to make up."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Work(Generic[T]):
    """What ``spread()`` hands out, and to whom."""

    ask: Callable[[EnvRunnerHandle, int, bool], Awaitable[T]]
    """Request a share of one runner; True: its first request of this work."""
    took: Callable[[EnvRunnerHandle, int, T], int]
    """Note what a runner returned for a share; return the units it did."""
    shares: Waves | Units | Until
    runners: Callable[[], Sequence[EnvRunnerHandle]]
    """The runners to ask now (called again after failures and restarts)."""
    what: str
    """What is left when no runner is: ``"sample {left} more of {total} env steps"``."""
    timeout_s: float | None
    """How long after no runner was left a restart may come (``RunnerHealth.revive``)."""
    setting: str
    """The setting that ``timeout_s`` comes from, for messages."""


async def spread(group: WorkingGroup, work: Work[T]) -> list[T]:
    """Do ``work`` on ``group``'s runners; return the results of the requests that succeeded.

    A remote runner's failure takes it out of service (or is raised) as the fault-tolerance
    settings say, once the other outcomes that came with it are handled; no request is
    cancelled because another failed. What it was to do is done by the others, and when
    none is left while a budget is owed, failed runners are restarted here
    (``RunnerHealth.revive``), or a ``RemoteError`` says why they cannot be.
    """
    if isinstance(work.shares, Waves):
        return await _in_waves(group, work, work.shares)
    return await _pulled(group, work, work.shares)


async def _in_waves(group: WorkingGroup, work: Work[T], waves: Waves) -> list[T]:
    results: list[T] = []
    began: set[int] = set()  # runners that had a request of this work
    done = 0
    stalled: float | None = None  # when no runner was left, first
    while done < waves.total:
        runners = work.runners()
        if not runners:
            stalled = time.monotonic() if stalled is None else stalled
            await _revive(group, work, waves.total - done, waves.total, stalled)
            continue
        asked = [
            (runner, share)
            for runner, share in zip(
                runners, waves.split(waves.total - done, len(runners)), strict=True
            )
            if share
        ]
        calls = [functools.partial(work.ask, r, n, _first(began, r)) for r, n in asked]
        outcomes = await collect(calls)
        shares = {id(runner): share for runner, share in asked}
        for runner, result in await _settle(group, [r for r, _ in asked], outcomes):
            done += work.took(runner, shares[id(runner)], result)
            results.append(result)
    return results


async def _pulled(group: WorkingGroup, work: Work[T], units: Units | Until) -> list[T]:
    """Hand a unit to every free runner as it frees, each request in its own task."""
    results: list[T] = []
    began: set[int] = set()
    idle = list(work.runners())
    stalled: float | None = None
    error: Exception | None = None  # raised once the requests under way have ended
    send, receive = anyio.create_memory_object_stream[tuple[EnvRunnerHandle, int, T | Exception]](
        math.inf
    )
    with send, receive:
        async with anyio.create_task_group() as tg:
            running = 0
            while True:
                while error is None and idle:
                    share = units.take(id(idle[0]) in began)
                    if share is None:
                        break
                    runner = idle.pop(0)
                    ask = functools.partial(work.ask, runner, share, _first(began, runner))
                    tg.start_soon(_deliver, ask, runner, share, send)
                    running += 1
                if running == 0 and error is None and units.left:  # owed, and no runner to do it
                    assert units.total is not None
                    stalled = time.monotonic() if stalled is None else stalled
                    await _revive(group, work, units.left, units.total, stalled)
                    idle = list(work.runners())
                    continue
                if running == 0:
                    break
                runner, share, outcome = await receive.receive()
                running -= 1
                try:
                    for _, result in await _settle(group, [runner], [outcome]):
                        work.took(runner, share, result)
                        results.append(result)
                        idle.append(runner)
                except Exception as exc:  # raised once the requests under way have ended
                    error = error or exc
                if isinstance(outcome, Exception) and error is None:
                    units.give_back(share)
    if error is not None:
        raise error
    return results


def _first(began: set[int], runner: EnvRunnerHandle) -> bool:
    """Tell whether this is ``runner``'s first request of the work (and note it is not next)."""
    first = id(runner) not in began
    began.add(id(runner))
    return first


async def _settle(
    group: WorkingGroup, runners: Sequence[EnvRunnerHandle], outcomes: Sequence[T | Exception]
) -> list[tuple[EnvRunnerHandle, T]]:
    """Count the samples that came first (failures are then not in a row), then the failures."""
    if any(not isinstance(outcome, Exception) for outcome in outcomes):
        group.health.sampled()
    return await group._settle(runners, outcomes)


async def _revive(
    group: WorkingGroup, work: Work[T], left: int, total: int, stalled: float
) -> None:
    await group.health.revive(
        group.current_weights(),
        what=work.what.format(left=left, total=total),
        since=stalled,
        limit_s=work.timeout_s,
        setting=work.setting,
    )


async def _deliver(
    ask: Callable[[], Awaitable[T]],
    runner: EnvRunnerHandle,
    share: int,
    send: anyio.abc.ObjectSendStream[tuple[EnvRunnerHandle, int, T | Exception]],
) -> None:
    """Run one runner's request and send back what came of it, an exception included."""
    outcome: T | Exception
    try:
        outcome = await ask()
    except Exception as exc:
        outcome = exc
    await send.send((runner, share, outcome))
