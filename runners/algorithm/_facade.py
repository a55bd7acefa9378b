"""The Algorithm's sync facade: where its blocking twins run its coroutines, from any thread."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar, final

from .._errors import AlgorithmStateError
from .._loop import LoopThread, run_sync
from ._lifecycle import Lifecycle

__all__ = ("SyncFacade",)

T = TypeVar("T")


@final
class SyncFacade:
    """Run an Algorithm's coroutines for sync callers (``train()``, ``evaluate()``, ...).

    They run on one event loop that lives as long as the Algorithm, in a daemon thread of
    its own (``loop``); that works from plain code, from a thread that runs a loop of its
    own (a notebook) and from handlers run in worker threads. An Algorithm set up in the
    caller's loop (``async with``, or a bus of that loop: ``caller_loop``) refuses them,
    naming the async twin. ``setup`` sets the Algorithm up (its ``asetup``).
    """

    def __init__(self, setup: Callable[[], Awaitable[None]], *, caller_loop: bool) -> None:
        self._setup = setup
        self.loop: LoopThread | None = None
        """The Algorithm's own loop thread; None before it starts, or in the caller's loop."""
        self.caller_loop = caller_loop
        """Whether the Algorithm belongs to its caller's event loop (then only async use)."""

    def start(self) -> None:
        """Start the loop thread and set the Algorithm up in it."""
        # Set before setup: the Algorithm hands the loop to its runner groups while it sets up.
        self.loop = LoopThread()
        try:
            self.loop.call(self._setup)
        except BaseException:
            self.loop.close()
            self.loop = None
            raise

    def set_up_in_caller_loop(self) -> None:
        """Note that the Algorithm is being set up in its caller's loop, if not in its own."""
        if self.loop is None:
            self.caller_loop = True

    def run(
        self,
        lifecycle: Lifecycle,
        name: str,
        twin: str,
        fn: Callable[..., Awaitable[T]],
        *args: object,
    ) -> T:
        """Return ``await fn(*args)`` for the sync method ``name`` (async twin ``twin``).

        An Algorithm built inside a running loop (a notebook cell) and first used from sync
        code is set up here, in a loop thread of its own, as outside a loop.
        """
        if self.loop is None:
            if lifecycle is Lifecycle.STOPPED:
                raise AlgorithmStateError(f"{name}() after stop(): the Algorithm is stopped")
            if self.caller_loop:
                raise in_loop_error(name, twin)
            self.start()
        return run_sync(self.loop, f"algo.{twin}()", fn, *args)

    def close(self, astop: Callable[[], Awaitable[None]]) -> None:
        """Run ``astop()`` in the loop thread, then end the thread."""
        assert self.loop is not None, "close() is for an Algorithm with a loop of its own"
        try:
            run_sync(self.loop, "algo.astop()", astop)
        finally:
            self.loop.close()
            self.loop = None


def in_loop_error(name: str, twin: str) -> AlgorithmStateError:
    """Return the error for sync method ``name`` of an Algorithm in its caller's loop."""
    return AlgorithmStateError(
        f"{name}() would block the event loop this Algorithm was set up in (with "
        f"`async with` or a bus of that loop); use `await algo.{twin}()` there"
    )
