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

from ._chain import Handler
from ._chains import ChainTable
from ._errors import ConfigError

__all__ = ("Kept", "Retained", "check_last", "last_events")


class Retained:
    """What a bus retains (``bus.retain``): per hook, the last N events and their keeper."""

    def __init__(self, chains: ChainTable) -> None:
        self._chains = chains
        self._kept: dict[str, tuple[Kept, Handler]] = {}
        self._order = itertools.count()  # the publish order of kept events, across hooks

    def retain(self, hooks: list[str], last: int) -> None:
        """Keep the last ``last`` events of each of ``hooks`` (0: stop keeping them)."""
        check_last(last, "retain(last=...)")
        if not hooks:
            raise ConfigError("retain() needs event types to keep, e.g. retain(MyEvent, last=100)")
        for hook in hooks:
            found = self._kept.get(hook)
            if found is not None and last:
                found[0].resize(last)
            elif found is not None:
                kept, keeper = self._kept.pop(hook)
                # remove() calls the match at once, so the loop variable cannot go stale.
                self._chains.remove("stream", hook, lambda h: h is keeper)  # noqa: B023
            elif last:
                kept = Kept(last, self._order)
                keeper = Handler.of(kept.keep, takes_live=False, observer=True)
                self._chains.add({"stream": {hook: [keeper]}})
                self._kept[hook] = (kept, keeper)

    def last(self, hooks: list[str], history: object, buffer: int) -> list[BaseEvent]:
        """Return the last ``history`` retained events of ``hooks`` for a new stream."""
        n = check_last(history, "history")
        if not n:
            return []
        if isinstance(buffer, int) and n > buffer:  # a bad buffer: EventStream says why
            raise ConfigError(f"history={n} does not fit the stream's buffer={buffer}")
        kept = [self._kept[hook][0] for hook in hooks if hook in self._kept]
        if not kept:
            raise ConfigError(
                f"history={n} asks for events the bus did not retain; call "
                f"bus.retain({', '.join(hooks[:3])}{', ...' if len(hooks) > 3 else ''}, "
                f"last=...) before they are published"
            )
        return last_events(kept, n)


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
