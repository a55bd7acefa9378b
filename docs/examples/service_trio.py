"""A trio service with its own events: a greenhouse monitor (docs/embedding.md).

Its event types are defined right here. Sensors publish readings from their own tasks,
each through its Publisher (one source each, numbered without gaps); an alarm handler with
a deadline and an error policy of its own, and a dashboard consumer task the bus owns,
receive them in order. Nothing here is asyncio: trio runs it, and the kernel follows.
"""

from __future__ import annotations

from typing import Any

import trio

from hookbus.events import BaseEvent
from hookbus.kernel import Bus, EventStream, Publisher


class ReadingTaken(BaseEvent, frozen=True, kw_only=True, tag="greenhouse.reading"):
    """A sensor's reading (hook ``on_reading_taken``)."""

    sensor: str
    celsius: float


class TooHot(BaseEvent, frozen=True, kw_only=True, tag="greenhouse.too_hot"):
    """Published by the alarm handler for a reading over the limit (hook ``on_too_hot``)."""

    sensor: str
    celsius: float


async def sensor(bus: Bus, name: str, readings: list[float]) -> None:
    publisher = Publisher(bus, f"sensor:{name}")
    for celsius in readings:
        await publisher.publish(ReadingTaken, sensor=name, celsius=celsius)
        await trio.sleep(0.001)


async def dashboard(events: EventStream) -> None:
    async for event in events:
        print(f"dashboard: {event.source} #{event.seq}: {event.celsius:.1f} C")  # type: ignore[attr-defined]


async def main() -> None:
    async with Bus(deadline=1.0) as bus:  # every handler's time limit, unless it sets one
        alarm = Publisher(bus, "alarm")

        async def check(*, event: ReadingTaken, **kwargs: Any) -> None:
            if event.celsius > 30.0:
                await alarm.publish(TooHot, sensor=event.sensor, celsius=event.celsius)

        def flaky_logger(*, event: ReadingTaken, **kwargs: Any) -> None:
            if event.celsius < 0:
                raise ValueError(f"impossible reading {event.celsius}")

        bus.subscribe(ReadingTaken, check)
        bus.subscribe(ReadingTaken, flaky_logger, on_error="log")  # logged, counted, goes on
        bus.subscribe(TooHot, lambda *, event, **kw: print(f"ALARM: {event.sensor} too hot"))
        bus.consume(dashboard, ReadingTaken, buffer=4)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(sensor, bus, "north", [21.0, 25.5, 31.2])
            nursery.start_soon(sensor, bus, "south", [19.5, -40.0, 22.0])
        stats = bus.statistics()
    print(f"handler errors logged: {stats.errors_by_hook}; alarms sent: {alarm.seq}")


if __name__ == "__main__":
    trio.run(main)
