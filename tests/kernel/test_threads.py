"""A bus belongs to its event loop's thread: other threads publish through the safe entry.

Issue 46: one Publisher used from the loop and from two threads (each running an event
loop of its own) duplicated seq numbers and ran handlers over each other, silently. Now a
publish from a foreign thread is refused at once, naming ``publish_threadsafe``, which runs
the publish in the bus's loop and waits.
"""

from __future__ import annotations

import pickle
import re
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.lowlevel
import cloudpickle
import pytest

from hookbus.events import BaseEvent, TrainResult
from hookbus.kernel import Bus, BusClosedError, Publisher, WrongThreadError

SAFE_ENTRY = r"use bus\.publish_threadsafe\(event, \*\*live\) or publisher\.publish_threadsafe"


def in_thread(fn: Callable[[], object]) -> Any:
    """Return ``fn()`` run in a new ``threading.Thread`` (re-raise what it raised)."""
    result: list[object] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            result.append(fn())
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=run, name="foreign")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return result[0]


async def in_thread_async(fn: Callable[[], object]) -> Any:
    """``in_thread`` without blocking the event loop meanwhile (the thread may need it)."""
    return await anyio.to_thread.run_sync(in_thread, fn)


def loop_of_its_own(fn: Callable[[], Awaitable[object]], backend: str) -> Callable[[], object]:
    """Return a function that runs ``await fn()`` on a new event loop of ``backend``."""

    async def main() -> object:
        return await fn()

    return lambda: anyio.run(main, backend=backend)


class Overlaps:
    """A handler that records each event's seq and counts calls running at once."""

    def __init__(self) -> None:
        self.seen: list[int] = []
        self.inside = 0
        self.overlaps = 0

    def enter(self, event: BaseEvent) -> None:
        self.overlaps += self.inside > 0
        self.inside += 1
        self.seen.append(event.seq)

    def __call__(self, *, event: BaseEvent, **kwargs: Any) -> None:
        self.enter(event)
        self.inside -= 1


class AsyncOverlaps(Overlaps):
    async def __call__(self, *, event: BaseEvent, **kwargs: Any) -> None:  # type: ignore[override]
        self.enter(event)
        await anyio.lowlevel.checkpoint()  # another task would run here and call us again
        self.inside -= 1


# --- refused: a publish from a foreign thread -----------------------------------------------


@pytest.mark.anyio
async def test_a_publish_from_another_thread_is_refused_naming_the_safe_entry(
    anyio_backend: str,
) -> None:
    handler = Overlaps()
    bus = Bus(on_train_result=handler)
    publisher = Publisher(bus, "shop")
    await publisher.publish(TrainResult)  # the bus's first publish: this thread's loop
    attempts: list[tuple[str, Callable[[], Awaitable[object]]]] = [
        ("Publisher.publish()", lambda: publisher.publish(TrainResult)),
        ("Bus.publish()", lambda: bus.publish(TrainResult(source="x", seq=7))),
        ("Bus.forward()", lambda: bus.forward(TrainResult(source="x", seq=7))),
    ]
    for what, attempt in attempts:
        match = rf"{re.escape(what)} was called from thread 'foreign'.*{SAFE_ENTRY}"
        with pytest.raises(WrongThreadError, match=match):
            await in_thread_async(loop_of_its_own(attempt, anyio_backend))
    assert handler.seen == [0]  # nothing ran
    assert publisher.seq == 1  # and no seq was used
    assert issubclass(WrongThreadError, RuntimeError)


@pytest.mark.anyio
async def test_entering_the_bus_makes_it_this_loops_before_any_publish(
    anyio_backend: str,
) -> None:
    async with Bus(on_train_result=Overlaps()) as bus:
        publisher = Publisher(bus, "shop")
        with pytest.raises(WrongThreadError, match=SAFE_ENTRY):
            await in_thread_async(
                loop_of_its_own(lambda: publisher.publish(TrainResult), anyio_backend)
            )
        assert publisher.seq == 0


# --- the safe entry ------------------------------------------------------------------------


@pytest.mark.anyio
async def test_publish_threadsafe_from_two_threads_and_the_loop_keeps_seq_gap_free() -> None:
    handler = Overlaps()
    per_thread = 500
    async with Bus(on_train_result=handler) as bus:
        publisher = Publisher(bus, "shop")

        def publish_many() -> int:
            for _ in range(per_thread):
                publisher.publish_threadsafe(TrainResult)
            return per_thread

        async with anyio.create_task_group() as tasks:
            for _ in range(2):
                tasks.start_soon(in_thread_async, publish_many)
            for _ in range(per_thread):
                await publisher.publish(TrainResult)
                await anyio.lowlevel.checkpoint()  # let the threads' publishes in between
    assert handler.seen == list(range(3 * per_thread))  # in seq order, none twice or lost
    assert handler.overlaps == 0


@pytest.mark.anyio
async def test_publish_threadsafe_calls_run_one_at_a_time_through_async_handlers() -> None:
    handler = AsyncOverlaps()
    per_thread = 200
    async with Bus(on_train_result=handler) as bus:
        publisher = Publisher(bus, "shop")

        def publish_many() -> None:
            for _ in range(per_thread):
                event = publisher.publish_threadsafe(TrainResult, training_iteration=1)
                assert isinstance(event, TrainResult)

        async with anyio.create_task_group() as tasks:
            for _ in range(2):
                tasks.start_soon(in_thread_async, publish_many)
    assert handler.seen == list(range(2 * per_thread))
    assert handler.overlaps == 0


@pytest.mark.anyio
async def test_bus_publish_threadsafe_returns_the_chains_result_and_raises_its_errors() -> None:
    def fails(*, event: BaseEvent, **kwargs: Any) -> None:
        if event.seq == 1:
            raise ValueError("the handler's own error")

    async with Bus(on_train_result=fails) as bus:
        await bus.publish(TrainResult(seq=0))
        assert await in_thread_async(lambda: bus.publish_threadsafe(TrainResult(seq=0))) is None
        with pytest.raises(ValueError, match="the handler's own error"):
            await in_thread_async(lambda: bus.publish_threadsafe(TrainResult(seq=1)))
        with pytest.raises(WrongThreadError, match=r"own event loop thread.*await bus\.publish"):
            bus.publish_threadsafe(TrainResult(seq=2))  # here it would wait for itself
    with pytest.raises(BusClosedError, match="the bus is closed"):
        await in_thread_async(lambda: bus.publish_threadsafe(TrainResult(seq=3)))


def test_publish_threadsafe_needs_a_loop_and_says_when_it_is_gone() -> None:
    bus = Bus(on_train_result=Overlaps())
    publisher = Publisher(bus, "shop")
    with pytest.raises(WrongThreadError, match="this bus has none yet: enter it there"):
        in_thread(lambda: publisher.publish_threadsafe(TrainResult))
    anyio.run(publisher.publish, TrainResult)  # its loop: this thread's, which then ends
    with pytest.raises(WrongThreadError, match="the event loop this bus belonged to has ended"):
        in_thread(lambda: publisher.publish_threadsafe(TrainResult))
    # The bus is free again: the next loop to publish takes it.
    event = in_thread(loop_of_its_own(lambda: publisher.publish(TrainResult), "asyncio"))
    assert event.seq == 1


def test_a_bus_moves_on_once_the_thread_it_belonged_to_has_ended() -> None:
    """A sync Algorithm's loop thread stops, and the next one takes the same bus."""
    handler = Overlaps()
    bus = Bus(on_train_result=handler)
    publisher = Publisher(bus, "shop")
    for backend in ("asyncio", "trio"):
        in_thread(loop_of_its_own(lambda: publisher.publish(TrainResult), backend))
    assert handler.seen == [0, 1]


def test_a_pickled_bus_belongs_to_no_thread_yet() -> None:
    bus = Bus(on_train_result=Overlaps())
    anyio.run(bus.publish, TrainResult(seq=0))  # bound to this thread (its loop has ended)
    # As backend="process" sends configs by value: cloudpickle (compiled chains included).
    copy = pickle.loads(cloudpickle.dumps(Publisher(bus, "shop")))
    event = in_thread(loop_of_its_own(lambda: copy.publish(TrainResult), "trio"))
    assert event.source == "shop"
