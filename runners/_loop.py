"""The event loop behind the sync facade: one daemon thread per Algorithm, via a portal."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
from anyio.from_thread import BlockingPortal

__all__ = ("LoopThread", "in_event_loop")

T = TypeVar("T")


def in_event_loop() -> bool:
    """Tell whether the calling thread runs an async event loop (asyncio or trio)."""
    try:
        anyio.get_current_task()
    except anyio.NoEventLoopError:
        return False
    return True


class LoopThread:
    """Run an event loop in a daemon thread and call coroutines in it from sync code.

    A daemon thread, unlike anyio's ``start_blocking_portal`` executor thread, never keeps
    the interpreter from exiting when a script forgets ``algo.stop()``.
    """

    def __init__(self, name: str = "hookbus-loop") -> None:
        ready = threading.Event()
        self._portal: BlockingPortal | None = None
        self._error: BaseException | None = None

        async def serve() -> None:
            async with BlockingPortal() as portal:
                self._portal = portal
                ready.set()
                await portal.sleep_until_stopped()

        def run() -> None:
            try:
                anyio.run(serve)
            except BaseException as exc:  # reported to the caller waiting on `ready`
                self._error = exc
                ready.set()

        self._thread = threading.Thread(target=run, name=name, daemon=True)
        self._thread.start()
        ready.wait()
        if self._error is not None:
            raise self._error

    def call(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run ``await fn(*args)`` in the loop and return its result (or raise its error).

        An interrupt while waiting (Ctrl-C raises KeyboardInterrupt in this thread) cancels
        the call and waits until it has unwound before re-raising: nothing it started still
        runs in the loop when the caller goes on (to ``stop()`` the Algorithm, say).
        """
        portal = self._portal
        if portal is None:
            raise RuntimeError("the event loop thread has stopped")
        unwound = threading.Event()

        async def run() -> T:
            try:
                return await fn(*args)
            finally:
                unwound.set()

        future = portal.start_task_soon(run)
        try:
            return future.result()
        except BaseException:
            # A future still pending when we stop waiting was interrupted, not finished:
            # cancelling it cancels the task (anyio's portal), which then unwinds.
            if future.cancel():
                unwound.wait()
            raise

    def close(self) -> None:
        """Stop the loop and join its thread."""
        portal, self._portal = self._portal, None
        if portal is not None:
            portal.call(portal.stop)
            self._thread.join()
