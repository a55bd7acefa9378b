"""A closed bus is closed: nothing published after close() runs, a publish in flight included.

Issue 46: with a consumer present, close() while a publish awaited an async handler made
that publish raise anyio's ClosedResourceError (drop_oldest), and every later publish ran
its handlers again once the consumer's stream had left the chain.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from hookbus.events import BaseEvent, EpisodeEnd, TrainResult
from hookbus.kernel import Bus, BusClosedError, EventStream, HookbusWarning, Publisher

pytestmark = pytest.mark.anyio

IN_FLIGHT = "cannot deliver TrainResult to a stream: the bus was closed while it was being"
CLOSED = "cannot publish TrainResult: the bus is closed"


class Gate:
    """An async handler that records each call and waits until opened."""

    def __init__(self) -> None:
        self.calls: list[int] = []
        self.entered = anyio.Event()
        self.opened = anyio.Event()

    async def __call__(self, *, event: BaseEvent, **kwargs: Any) -> None:
        self.calls.append(event.seq)
        self.entered.set()
        await self.opened.wait()


async def publish_and_close(bus: Bus, gate: Gate, event: BaseEvent) -> BaseException | None:
    """Publish ``event``, close the bus while the chain waits in ``gate``; return what the
    publish raised (None if it returned)."""
    raised: list[BaseException | None] = []

    async def publish() -> None:
        try:
            await bus.publish(event)
        except Exception as exc:
            raised.append(exc)
        else:
            raised.append(None)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(publish)
        await gate.entered.wait()
        bus.close()
        gate.opened.set()
    return raised[0]


async def assert_refuses_everything(bus: Bus, publisher: Publisher) -> None:
    """Every way of publishing raises BusClosedError."""
    with pytest.raises(BusClosedError, match=CLOSED):
        await bus.publish(TrainResult(source="late", seq=1))
    with pytest.raises(BusClosedError, match=CLOSED):
        await bus.forward(TrainResult(source="late", seq=2))
    with pytest.raises(BusClosedError, match=CLOSED):
        await publisher.publish(TrainResult)
    held = bus.dispatcher(TrainResult)  # what the runners' hot loops call directly
    assert held.call is not None
    with pytest.raises(BusClosedError, match=CLOSED):
        held.call(TrainResult(source="late", seq=3))
    assert bus.closed


@pytest.mark.parametrize("overflow", ["drop_oldest", "block"])
async def test_close_during_a_publish_with_a_consumer_refuses_all_that_follows(
    overflow: str,
) -> None:
    gate = Gate()
    consumed: list[int] = []

    async def consumer(stream: EventStream) -> None:
        consumed.extend([event.seq async for event in stream])

    async with Bus() as bus:
        bus.subscribe(TrainResult, gate)
        bus.consume(consumer, TrainResult, overflow=overflow)
        publisher = Publisher(bus, "late")
        raised = await publish_and_close(bus, gate, TrainResult(source="first", seq=0))
        # Not anyio's ClosedResourceError: the bus's own error, saying what happened.
        assert isinstance(raised, BusClosedError)
        assert IN_FLIGHT in str(raised)
        await anyio.wait_all_tasks_blocked()  # the consumer has ended, its stream left
        await assert_refuses_everything(bus, publisher)
    assert gate.calls == [0]  # nothing after close ran the handler again
    assert consumed == []


async def test_a_publish_in_flight_without_streams_finishes_its_chain() -> None:
    gate = Gate()
    after: list[int] = []
    bus = Bus()
    bus.subscribe(TrainResult, gate)
    bus.subscribe(TrainResult, lambda *, event, **kw: after.append(event.seq))
    publisher = Publisher(bus, "late")
    assert await publish_and_close(bus, gate, TrainResult(seq=0)) is None
    assert after == [0]  # the chain that was running went on to its end
    await assert_refuses_everything(bus, publisher)
    assert gate.calls == [0]
    assert after == [0]


async def test_leaving_a_stream_after_close_leaves_the_bus_closed() -> None:
    bus = Bus()
    seen: list[int] = []

    def handler(*, event: BaseEvent, **kwargs: Any) -> None:
        seen.append(event.seq)

    bus.subscribe(TrainResult, handler)
    publisher = Publisher(bus, "late")
    async with bus.stream(TrainResult, overflow="drop_oldest") as stream:
        bus.close()
        assert [event async for event in stream] == []
    # Leaving recompiled the chain without its feeder: it must not come back to life.
    await assert_refuses_everything(bus, publisher)
    bus.unsubscribe(TrainResult, handler)  # so is unsubscribing after close
    await assert_refuses_everything(bus, publisher)
    assert seen == []


async def test_a_handler_quarantined_after_close_does_not_reopen_the_bus() -> None:
    gate = Gate()
    failures: list[int] = []

    def failing(*, event: BaseEvent, **kwargs: Any) -> None:
        failures.append(event.seq)
        raise ValueError("fails once the gate opens")

    bus = Bus(quarantine_after=1)
    bus.subscribe(TrainResult, gate)
    bus.subscribe(TrainResult, failing, on_error="quarantine")
    publisher = Publisher(bus, "late")
    # The quarantine takes the failing handler out of the chain after close(): that
    # recompiles the chain, which must stay the closed bus's.
    with pytest.warns(HookbusWarning, match="quarantined handler .*failing"):
        assert await publish_and_close(bus, gate, TrainResult(seq=0)) is None
    assert failures == [0]
    await assert_refuses_everything(bus, publisher)
    assert gate.calls == [0]
    assert failures == [0]


async def test_a_stream_left_while_a_publish_waits_drops_the_event_quietly() -> None:
    """The observer leaving (not the bus closing) owes nobody the event: no error at all."""
    gate = Gate()
    bus = Bus()
    bus.subscribe(EpisodeEnd, gate)
    done: list[str] = []

    async def publish() -> None:
        await bus.publish(EpisodeEnd(seq=0))
        done.append("returned")

    async with anyio.create_task_group() as tasks:
        async with bus.stream(EpisodeEnd, overflow="drop_oldest"):
            tasks.start_soon(publish)
            await gate.entered.wait()
        gate.opened.set()
    assert done == ["returned"]
    assert not bus.closed
