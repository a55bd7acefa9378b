"""RLlib's calls that return at once: ``foreach_env_runner_async`` sends, and
``fetch_ready_async_reqs`` collects what has come back.

Each request runs as a task of the Algorithm's own event loop (``LoopThread.spawn``) and
goes through the group's usual path, so a failing runner is handled as in
``foreach_env_runner`` (marked failed; its error raised or left out, as the config's
fault-tolerance settings say). Sync callers in any thread share the book-keeping below,
guarded by one lock; the loop's own thread may fetch but never wait.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Collection, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from hookbus.kernel import ConfigError

from .._loop import LoopThread, in_event_loop

__all__ = ("AsyncCalls",)

Request = Callable[[], Coroutine[Any, Any, list[Any]]]
"""One runner's call through the group: its result in a list, or [] if left out."""


@dataclass(frozen=True, slots=True)
class _Reply:
    worker_index: int
    tag: str | None
    results: list[Any]
    error: Exception | None


class AsyncCalls:
    """The requests a group has in flight, and the replies not fetched yet."""

    def __init__(self, loop: LoopThread | None, max_in_flight: int) -> None:
        self._loop = loop
        self._max_in_flight = max_in_flight
        self._changed = threading.Condition()
        self._in_flight: Counter[tuple[int, str | None]] = Counter()
        self._replies: list[_Reply] = []

    def in_flight(self, tag: str | None = None) -> int:
        """Return how many requests (with ``tag``; None: any) have not been fetched."""
        with self._changed:
            if tag is None:
                return sum(self._in_flight.values()) + len(self._replies)
            waiting = sum(n for (_, t), n in self._in_flight.items() if t == tag)
            return waiting + sum(reply.tag == tag for reply in self._replies)

    def send(self, requests: Sequence[tuple[int, Request]], tag: str | None) -> int:
        """Start each ``(worker_index, request)`` unless that runner already has the most
        requests in flight (``max_requests_in_flight_per_env_runner``); return how many
        started, as RLlib's ``foreach_env_runner_async``."""
        loop = self._loop
        if loop is None:
            raise ConfigError(
                "foreach_env_runner_async() needs the Algorithm's own event loop (an "
                "Algorithm built outside a loop); inside `async with`, run "
                "group.aforeach_env_runner(func) in a task group of yours instead"
            )
        started = 0
        for worker_index, request in requests:
            with self._changed:
                busy = sum(n for (i, _), n in self._in_flight.items() if i == worker_index)
                if busy + self._unfetched(worker_index) >= self._max_in_flight:
                    continue
                self._in_flight[worker_index, tag] += 1
            loop.spawn(self._runner(worker_index, tag, request))
            started += 1
        return started

    def fetch(
        self, tags: str | Collection[str] | None, timeout_seconds: float | None
    ) -> list[tuple[int, Any]]:
        """Return ``(worker_index, result)`` of the replies with ``tags`` (None or empty:
        any), waiting up to ``timeout_seconds`` (None: until every such request replied)
        for those in flight; raise the first error among them, as RLlib."""
        wanted = _tag_filter(tags)
        if timeout_seconds is not None and timeout_seconds < 0:
            raise ConfigError(
                f"fetch_ready_async_reqs(timeout_seconds={timeout_seconds!r}): give seconds "
                f">= 0, or None to wait for every request"
            )
        if timeout_seconds != 0 and self._on_loop_thread():
            raise ConfigError(
                "fetch_ready_async_reqs() with a timeout waits for the event loop, and this "
                "thread runs it (a sync per-step handler): pass timeout_seconds=0.0"
            )
        deadline = None if timeout_seconds is None else time.monotonic() + timeout_seconds
        with self._changed:
            while any(wanted(t) for (_, t), n in self._in_flight.items() if n):
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    break
                self._changed.wait(left)
            taken = [reply for reply in self._replies if wanted(reply.tag)]
            self._replies = [reply for reply in self._replies if not wanted(reply.tag)]
        errors = [reply.error for reply in taken if reply.error is not None]
        if errors:
            raise errors[0]
        return [(reply.worker_index, result) for reply in taken for result in reply.results]

    def _runner(self, worker_index: int, tag: str | None, request: Request) -> Request:
        async def run() -> list[Any]:
            results: list[Any] = []
            error: Exception | None = None
            try:
                results = await request()
            except Exception as exc:  # kept for fetch_ready_async_reqs() to raise
                error = exc
            finally:  # cancelled (the loop closing) or not, the request is no longer in flight
                with self._changed:
                    self._in_flight[worker_index, tag] -= 1
                    self._replies.append(_Reply(worker_index, tag, results, error))
                    self._changed.notify_all()
            return results

        return run

    def _unfetched(self, worker_index: int) -> int:
        # A reply not fetched yet still counts against its runner, as in RLlib's manager.
        return sum(reply.worker_index == worker_index for reply in self._replies)

    def _on_loop_thread(self) -> bool:
        loop = self._loop
        return loop.on_its_thread() if loop is not None else in_event_loop()


def _tag_filter(tags: str | Collection[str] | None) -> Callable[[str | None], bool]:
    if not tags:
        return lambda tag: True
    chosen = {tags} if isinstance(tags, str) else set(tags)
    return lambda tag: tag in chosen
