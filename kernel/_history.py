"""What a bus keeps for late streams: the last N events of the hooks it was asked to retain.

As in every pub/sub, an event published while nobody subscribes to its type is gone. A
service that opens streams later (a client connecting, a consumer task starting) asks the
bus to retain the last N events of some types (``bus.retain``); a stream opened with
``history=k`` then starts with the last k of them, in publish order, before any new one.
Retaining subscribes a keeper to the hook, so its events are built and kept: the cost is
opt-in, per type.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Iterable

from hookbus.events import BaseEvent

from ._errors import ConfigError

__all__ = ("Kept", "check_last", "last_events")


class Kept:
    """The last ``maxlen`` events of one hook, each with its place in the bus's publish order."""

    __slots__ = ("_order", "events")

    def __init__(self, last: int, order: itertools.count[int]) -> None:
        self._order = order  # one counter per bus: events of several hooks merge in order
        self.events: deque[tuple[int, BaseEvent]] = deque(maxlen=last)

    def keep(self, event: BaseEvent) -> None:
        """Keep ``event`` (the hook's chain calls this last, as it feeds streams)."""
        self.events.append((next(self._order), event))

    def resize(self, last: int) -> None:
        """Keep the last ``last`` events from now on (the newest ones stay)."""
        self.events = deque(self.events, maxlen=last)


def last_events(kept: Iterable[Kept], n: int) -> list[BaseEvent]:
    """Return the last ``n`` events of ``kept`` together, oldest first (publish order)."""
    merged = heapq.merge(*(k.events for k in kept), key=lambda item: item[0])
    return [event for _, event in deque(merged, maxlen=n)]


def check_last(value: object, what: str) -> int:
    """Return ``value`` if it is an int >= 0, else raise ConfigError naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{what} must be an int >= 0, got {value!r}")
    return value
