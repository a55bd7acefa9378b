"""The event loop behind the sync facade: one daemon thread per Algorithm, via a portal."""

from __future__ import annotations

import functools
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import anyio
import anyio.abc
from anyio.from_thread import BlockingPortal

from ._errors import AlgorithmStateError

__all__ = ("LoopThread", "blocking", "in_event_loop", "run_sync")

T = TypeVar("T")

_HANDOVER_S = 5.0  # how long a call interrupted while being handed over may take to start


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

    def __init__(self, name: str = "hookbus-loop", backend: str = "asyncio") -> None:
        ready = threading.Event()
        self._portal: BlockingPortal | None = None
        self._tasks: anyio.abc.TaskGroup | None = None  # what spawn() starts, ended on close
        self._error: BaseException | None = None

        async def serve() -> None:
            async with BlockingPortal() as portal, anyio.create_task_group() as tasks:
                self._portal, self._tasks = portal, tasks
                ready.set()
                await portal.sleep_until_stopped()
                tasks.cancel_scope.cancel()  # spawned tasks end with the loop

        def run() -> None:
            try:
                anyio.run(serve, backend=backend)
            except BaseException as exc:  # reported to the caller waiting on `ready`
                self._error = exc
                ready.set()

        self._thread = threading.Thread(target=run, name=name, daemon=True)
        self._thread.start()
        self.thread_id = self._thread.ident
        """The loop thread's ident (sync calls from it would deadlock)."""
        ready.wait()
        if self._error is not None:
            raise self._error

    def on_its_thread(self) -> bool:
        """Tell whether the caller is the loop's own thread (it must not block on the loop)."""
        return threading.get_ident() == self.thread_id

    def call(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run ``await fn(*args)`` in the loop and return its result (or raise its error).

        An interrupt while waiting (Ctrl-C raises KeyboardInterrupt in this thread) cancels
        the call and waits until it has unwound before re-raising: nothing it started still
        runs in the loop when the caller goes on (to ``stop()`` the Algorithm, say).
        """
        portal = self._portal
        if portal is None:
            raise RuntimeError("the event loop thread has stopped")
        started, unwound = threading.Event(), threading.Event()
        scopes: list[anyio.CancelScope] = []

        async def run() -> T:
            try:
                with anyio.CancelScope() as scope:
                    scopes.append(scope)
                    started.set()
                    return await fn(*args)
                raise AlgorithmStateError("interrupted")  # cancelled by an interrupt
            finally:
                unwound.set()

        future = None
        try:
            future = portal.start_task_soon(run)
            return future.result()
        except BaseException:
            if future is None:
                # Interrupted while handing the call over: it may have started all the same.
                if started.wait(_HANDOVER_S):
                    portal.call(scopes[0].cancel)
                    unwound.wait()
            # A future still pending when we stop waiting was interrupted, not finished:
            # cancelling it cancels the task (anyio's portal), which then unwinds.
            elif future.cancel():
                unwound.wait()
            raise

    def spawn(self, fn: Callable[[], Coroutine[Any, Any, Any]]) -> None:
        """Start ``fn()`` in the loop and return at once, from any thread.

        It runs until it returns or the loop closes (then it is cancelled); it must catch
        its own exceptions, as one escaping would end the loop.
        """
        tasks = self._tasks
        if self._portal is None or tasks is None:
            raise RuntimeError("the event loop thread has stopped")

        def start() -> None:
            tasks.start_soon(fn)

        if self.on_its_thread():
            start()
        else:
            self._portal.call(start)

    def close(self) -> None:
        """Stop the loop and join its thread."""
        portal, self._portal = self._portal, None
        if portal is not None:
            portal.call(portal.stop)
            self._thread.join()


def run_sync(
    loop: LoopThread | None,
    twin: str,
    fn: Callable[..., Awaitable[T]],
    *args: Any,
    may_wait: bool = True,
) -> T:
    """Return ``await fn(*args)`` for sync code, from whichever thread it is called.

    ``loop`` is the Algorithm's own loop thread (None when it lives in the caller's loop).
    From another thread (a script, a notebook's loop thread, a handler run in a worker
    thread) the call goes to that loop and blocks. On the loop's own thread (a sync handler
    called inline) blocking would deadlock: there only a call that never waits
    (``may_wait=False``: in-process runners) runs, to completion; otherwise the error names
    ``twin``, the async form to await instead.
    """
    if loop is not None and threading.get_ident() != loop.thread_id:
        return loop.call(fn, *args)
    if loop is None and not in_event_loop():
        try:  # a worker thread of the caller's loop (anyio.to_thread)
            result: T = anyio.from_thread.run(fn, *args)  # type: ignore[arg-type]
            return result
        except RuntimeError as exc:
            if "worker thread" not in str(exc):
                raise
            raise AlgorithmStateError(
                f"this Algorithm runs in another thread's event loop; use `await {twin}` there"
            ) from None
    if may_wait:
        raise AlgorithmStateError(
            f"this call waits (for worker processes or the learner), which sync code running "
            f"on the event loop's own thread cannot do without deadlocking; make the handler "
            f"async and use `await {twin}`"
        )
    coroutine: Any = fn(*args)
    try:
        coroutine.send(None)
    except StopIteration as done:
        value: T = done.value
        return value
    coroutine.close()
    raise RuntimeError(f"hookbus bug: {fn!r} waited although may_wait=False")


def blocking(loop: LoopThread | None, twin: str, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    """Return ``await fn(*args)`` for a sync method of an EnvRunner (``sample()``).

    From a thread other than ``loop``'s: in ``loop``. On a thread running an event loop
    (the loop's own, say a sync per-step handler): an ``AlgorithmStateError`` naming
    ``twin``, never a deadlock. From a worker thread of the caller's loop (where
    ``foreach_env_runner`` runs user functions): in that loop. Anywhere else (a runner of
    its own, in a worker process or a script): in a fresh event loop.
    """
    if loop is not None and threading.get_ident() != loop.thread_id:
        return loop.call(fn, *args)
    if in_event_loop():
        raise AlgorithmStateError(
            f"this call waits for the runner's event loop, and this thread runs that loop: "
            f"blocking here would deadlock; make the handler async and use `await {twin}`"
        )
    try:
        result: T = anyio.from_thread.run(fn, *args)  # type: ignore[arg-type]
        return result
    except RuntimeError as exc:
        if "worker thread" not in str(exc):
            raise
    return anyio.run(functools.partial(fn, *args))
