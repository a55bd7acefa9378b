"""Which thread a bus belongs to, and the thread-safe way in from the others.

A bus, like anyio's and trio's objects, belongs to one event loop: its chains and its
publishers' ``seq`` counters assume that one publish runs at a time between awaits. A
publish from another thread (its own event loop, say) would interleave with the loop's and
silently duplicate ``seq`` numbers. So a bus remembers its loop's thread (``LoopHome``),
the first time it is entered or published to, and every publish compares the caller's
thread with it: one ``get_ident()`` call and one comparison, the only cost on the hot path
(bench/dispatch.py). A publish from another thread is refused at once with a
``WrongThreadError`` naming the way that works: ``publish_threadsafe``, which runs the
publish in the bus's loop (``anyio.from_thread.run`` with the loop's token) and waits.

A bus may move to another thread once the thread it belonged to has ended (a sync
Algorithm's loop thread after ``stop()``, and a new Algorithm given the same bus).
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from threading import get_ident
from typing import TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel

from ._errors import WrongThreadError

__all__ = ("SAFE_ENTRY", "LoopHome", "ThreadLock")

T = TypeVar("T")

SAFE_ENTRY = (
    "From another thread, use bus.publish_threadsafe(event, **live) or "
    "publisher.publish_threadsafe(EventType, live, **fields), which run the publish in "
    "the bus's event loop and wait for it (docs/embedding.md, 'Threads')"
)


class LoopHome:
    """The thread (and event loop) one bus belongs to; shared by the bus's publishers.

    ``ident`` is the thread's ident (None until the bus is first entered or published
    to): what the hot path compares ``get_ident()`` with. Everything else is the slow path.
    """

    __slots__ = ("_lock", "_thread", "_token", "ident")

    def __init__(self) -> None:
        self.ident: int | None = None
        self._thread: threading.Thread | None = None
        self._token: anyio.lowlevel.EventLoopToken | None = None
        self._lock = ThreadLock()

    def __reduce__(self) -> tuple[type[LoopHome], tuple[()]]:
        return LoopHome, ()  # a copy (a bus sent to a worker process) belongs to no thread

    def adopt(self, what: str) -> None:
        """Make the calling thread's running event loop the bus's home, or refuse.

        Called where ``get_ident() != ident``: on the first publish (or ``async with``),
        and from a foreign thread, which is refused with a ``WrongThreadError`` naming
        ``what`` was called, unless the thread the bus belonged to has ended.
        """
        with self._lock:  # two threads racing to be first: one wins, the other is refused
            owner = self._thread
            if owner is not None and self.ident != get_ident() and owner.is_alive():
                raise WrongThreadError(
                    f"{what} was called from thread {threading.current_thread().name!r}, but "
                    f"this bus belongs to the event loop of thread {owner.name!r}; a publish "
                    f"from another thread would interleave with that loop's and duplicate "
                    f"seq numbers. {SAFE_ENTRY}"
                )
            self._thread = threading.current_thread()
            try:
                self._token = anyio.lowlevel.current_token()
            except anyio.NoEventLoopError:  # a coroutine driven by hand (``send(None)``)
                self._token = None
            self.ident = get_ident()  # last: the hot path reads it without the lock

    def enter(self) -> None:
        """Adopt the event loop entering the bus (``async with``).

        Its token is taken even on the thread the bus already belongs to: a later
        ``anyio.run`` there is another loop.
        """
        self.adopt("entering the bus (async with)")

    def run(self, fn: Callable[[], Awaitable[T]], what: str) -> T:
        """Return ``await fn()`` run in the bus's event loop, waiting for it (any thread)."""
        token = self._token
        if token is None:
            raise WrongThreadError(
                f"{what} runs the publish in the bus's event loop, and this bus has none yet: "
                f"enter it there (async with bus) or publish there once first"
            )
        if get_ident() == self.ident:
            raise WrongThreadError(
                f"{what} was called from the bus's own event loop thread, where waiting for "
                f"that loop would deadlock; there, await the publish itself "
                f"(await bus.publish(...) or await publisher.publish(...))"
            )
        try:
            return anyio.from_thread.run(_awaited, fn, token=token)
        except anyio.RunFinishedError:
            with self._lock:  # the next publish in a loop of that thread takes it again
                if self._token is token:
                    self.ident = self._thread = self._token = None
            raise WrongThreadError(
                f"{what}: the event loop this bus belonged to has ended; enter the bus in "
                f"its new loop (async with bus) or publish there once first"
            ) from None


async def _awaited(fn: Callable[[], Awaitable[T]]) -> T:
    return await fn()


class ThreadLock:
    """A ``threading.Lock`` (``with lock:``) that pickles as a new, unlocked one."""

    __slots__ = ("_lock",)

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def __enter__(self) -> None:
        self._lock.acquire()

    def __exit__(self, *exc_info: object) -> None:
        self._lock.release()

    def __reduce__(self) -> tuple[type[ThreadLock], tuple[()]]:
        return ThreadLock, ()
