"""Detached, bounded observers of a bus: ``async with bus.stream(EpisodeEnd) as events``."""

from __future__ import annotations

from typing import Literal

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from hookbus.events import BaseEvent

from ._errors import BusClosedError, ConfigError

__all__ = ("OVERFLOW_POLICIES", "EventStream", "Overflow")

Overflow = Literal["block", "drop_oldest"]
OVERFLOW_POLICIES: tuple[Overflow, ...] = ("block", "drop_oldest")


class EventStream:
    """Receive a bus's events of the chosen types, in publish order, through a bounded buffer.

    Iterate it (``async for event in stream``) or call ``receive()``. When the buffer is full,
    ``overflow="block"`` makes publishers wait for room (back-pressure) and
    ``"drop_oldest"`` discards the oldest buffered event and counts it in ``dropped``.
    Iteration ends once the bus closes and the buffer is drained, or as soon as the
    stream's ``async with`` block exits, also in another task still iterating it (what was
    buffered then is dropped): never with an error of the underlying anyio stream.
    """

    def __init__(self, buffer: int, overflow: str) -> None:
        if overflow not in OVERFLOW_POLICIES:
            raise ConfigError(
                f"unknown overflow policy {overflow!r}; allowed: "
                + ", ".join(repr(p) for p in OVERFLOW_POLICIES)
            )
        if isinstance(buffer, bool) or not isinstance(buffer, int) or buffer < 1:
            raise ConfigError(f"stream buffer must be a positive int, got {buffer!r}")
        self.dropped = 0
        """How many events ``drop_oldest`` discarded so far."""
        self.overflow: Overflow = "block" if overflow == "block" else "drop_oldest"
        self._ended = False  # the bus closed: a feeder still running (in flight) says so
        self._send: MemoryObjectSendStream[BaseEvent]
        self._receive: MemoryObjectReceiveStream[BaseEvent]
        self._send, self._receive = anyio.create_memory_object_stream[BaseEvent](buffer)

    async def put(self, event: BaseEvent) -> None:
        """Feed one event, waiting for room (the ``block`` policy's bus handler)."""
        try:
            await self._send.send(event)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            self._undelivered(event)

    def put_dropping_oldest(self, event: BaseEvent) -> None:
        """Feed one event, discarding the oldest when full (the ``drop_oldest`` bus handler)."""
        try:
            self._send.send_nowait(event)
        except anyio.WouldBlock:
            # Full means no receiver is waiting, so the oldest item is ours to take.
            self._receive.receive_nowait()
            self.dropped += 1
            self._send.send_nowait(event)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            self._undelivered(event)

    def _undelivered(self, event: BaseEvent) -> None:
        """Settle an event a publish in flight could not deliver: the stream is shut.

        Feeders leave the chains at once, so only a chain that was already running gets
        here (awaiting an earlier handler, or this feeder waiting for room). If the
        observer left, nobody is owed the event; if the bus closed, the publisher is told
        with a BusClosedError, never with the anyio stream's error.
        """
        if self._ended:
            raise BusClosedError(
                f"cannot deliver {type(event).__name__} to a stream: the bus was closed "
                f"while it was being published"
            )

    async def receive(self) -> BaseEvent:
        """Return the next event; raise ``anyio.EndOfStream`` once no more can come.

        That is after the bus closed and the buffer is drained, or after the stream's
        ``async with`` block exited (here or in another task, even while this one waited).
        """
        try:
            return await self._receive.receive()
        except anyio.ClosedResourceError:
            # Only _discard() closes the receiving side: the stream's block has exited.
            raise anyio.EndOfStream from None

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> BaseEvent:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    def _end(self) -> None:
        """Stop feeding: buffered events stay readable, then iteration ends."""
        self._ended = True
        self._send.close()

    def _discard(self) -> None:
        """Close both sides (the stream's block exited); receivers see the end of stream."""
        self._send.close()
        self._receive.close()
