"""Consumers a bus owns (``bus.consume``): tasks that end when the bus closes.

A consumer iterating a stream in the caller's own task group inside ``async with Bus()``
would hang: the bus closes, ending its streams, only when that block ends, and the block
waits for the task group first. So ``async with Bus()`` enters a task group of its own;
``consume`` starts consumers there, and leaving the block closes the bus (their streams end
once drained) and then leaves that task group, which waits for them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from anyio.abc import TaskGroup

from ._chain import describe
from ._stream import EventStream

__all__ = ("join_consumers", "start_consumer")


def start_consumer(
    tasks: TaskGroup,
    fn: Callable[[EventStream], Awaitable[Any]],
    stream: EventStream,
    leave: Callable[[], None],
) -> None:
    """Run ``await fn(stream)`` in ``tasks``, then ``leave()`` (unsubscribe the stream)."""

    async def run() -> None:
        try:
            await fn(stream)
        finally:
            leave()

    tasks.start_soon(run, name=f"hookbus consumer {describe(fn)}")


async def join_consumers(tasks: TaskGroup, exc: BaseException | None) -> bool | None:
    """Leave the bus's task group after its block raised ``exc`` (or None), waiting for the
    consumers.

    The block's own exception propagates as itself, not in an ExceptionGroup: the group is
    the bus's business, and a bus with no consumer must behave as one without. A consumer's
    exception propagates in one, as from any task group.
    """
    try:
        trace = exc.__traceback__ if exc is not None else None
        return await tasks.__aexit__(type(exc) if exc else None, exc, trace)
    except BaseExceptionGroup as group:
        if exc is not None and group.exceptions == (exc,):
            return None  # the ``async with`` statement re-raises it as it was
        raise
    except BaseException as raised:
        if raised is exc:
            return None
        raise
