"""Service-grade semantics: early events, retained history, consumers that end with the bus."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from hookbus.events import EpisodeEnd
from hookbus.kernel import Bus, BusClosedError, ConfigError, EventStream, Publisher

sys.path.insert(0, str(Path(__file__).parents[1]))
from shop_events import OrderPlaced, PaymentFailed

pytestmark = pytest.mark.anyio


async def place(shop: Publisher, *ids: str) -> None:
    for order_id in ids:
        await shop.publish(OrderPlaced, order_id=order_id, total=1.0)


async def receive_all(events: EventStream, n: int) -> list[str]:
    return [(await events.receive()).order_id for _ in range(n)]  # type: ignore[attr-defined]


async def test_events_before_any_subscriber_are_dropped_and_use_no_seq() -> None:
    async with Bus() as bus:
        shop = Publisher(bus, "shop")
        await place(shop, "early")
        async with bus.stream(OrderPlaced) as events:
            await place(shop, "late")
            (late,) = [await events.receive()]
    assert late.order_id == "late"  # type: ignore[attr-defined]
    assert late.seq == 0  # the dropped event was never built: no gap in the numbering


async def test_a_late_stream_gets_the_retained_history_then_live_events() -> None:
    async with Bus() as bus:
        bus.retain(OrderPlaced, last=3)
        shop = Publisher(bus, "shop")
        await place(shop, "a", "b", "c", "d")
        async with bus.stream(OrderPlaced, buffer=10, history=2) as events:
            await place(shop, "e")
            got = await receive_all(events, 3)
        async with bus.stream(OrderPlaced, buffer=10, history=10) as everything:
            assert await receive_all(everything, 3) == ["c", "d", "e"]  # 3 kept, not 10
    assert got == ["c", "d", "e"]


async def test_history_of_several_types_merges_in_publish_order() -> None:
    async with Bus() as bus:
        bus.retain(OrderPlaced, PaymentFailed, last=5)
        await bus.publish(OrderPlaced(seq=0, order_id="o1", total=1.0))
        await bus.publish(PaymentFailed(seq=1, order_id="o1"))
        await bus.publish(OrderPlaced(seq=2, order_id="o2", total=1.0))
        async with bus.stream(OrderPlaced, PaymentFailed, history=5) as events:
            seqs = [(await events.receive()).seq for _ in range(3)]
    assert seqs == [0, 1, 2]


async def test_retaining_is_a_subscriber_and_can_be_resized_or_stopped() -> None:
    async with Bus() as bus:
        assert not bus.has_subscribers(OrderPlaced)
        bus.retain("on_order_placed", last=5)
        assert bus.has_subscribers(OrderPlaced)  # the events are built, to be kept
        shop = Publisher(bus, "shop")
        await place(shop, "a", "b", "c")
        bus.retain(OrderPlaced, last=1)
        async with bus.stream(OrderPlaced, history=3) as events:
            assert await receive_all(events, 1) == ["c"]
        bus.retain(OrderPlaced, last=0)
        assert not bus.has_subscribers(OrderPlaced)


async def test_bad_history_options_are_refused() -> None:
    async with Bus() as bus:
        with pytest.raises(ConfigError, match=r"history=2 asks for events the bus did not retain"):
            async with bus.stream(OrderPlaced, history=2):
                pass
        bus.retain(OrderPlaced, last=10)
        with pytest.raises(ConfigError, match=r"history=5 does not fit the stream's buffer=2"):
            async with bus.stream(OrderPlaced, buffer=2, history=5):
                pass
        with pytest.raises(ConfigError, match=r"history must be an int >= 0, got -1"):
            async with bus.stream(OrderPlaced, history=-1):
                pass
        with pytest.raises(ConfigError, match=r"retain\(last=...\) must be an int >= 0"):
            bus.retain(OrderPlaced, last=1.5)  # type: ignore[arg-type]
        with pytest.raises(ConfigError, match=r"retain\(\) needs event types"):
            bus.retain(last=3)
        assert bus.statistics().subscribers == {"on_order_placed": 1}  # nothing left behind


# --- consumers the bus owns ------------------------------------------------------------------


async def test_a_consumer_ends_cleanly_when_the_bus_block_ends() -> None:
    got: list[str] = []

    async def audit(events: EventStream) -> None:
        async for event in events:
            await anyio.lowlevel.checkpoint()  # a consumer that takes its time
            got.append(event.order_id)  # type: ignore[attr-defined]

    async with Bus() as bus:
        bus.consume(audit, OrderPlaced, buffer=2)  # subscribed now: nothing is missed
        shop = Publisher(bus, "shop")
        await place(shop, "a", "b", "c", "d", "e")  # back-pressure: the buffer holds 2
    assert got == ["a", "b", "c", "d", "e"]  # every one, then the consumer returned


async def test_a_consumer_sees_the_history_and_counts_drops() -> None:
    got: list[str] = []

    async def slow(events: EventStream) -> None:
        got.extend([event.order_id async for event in events])  # type: ignore[attr-defined]

    async with Bus() as bus:
        bus.retain(OrderPlaced, last=1)
        shop = Publisher(bus, "shop")
        await place(shop, "before")
        stream = bus.consume(slow, OrderPlaced, buffer=2, overflow="drop_oldest", history=1)
        await place(shop, "x", "y", "z")  # no checkpoint yet: the consumer has not run
    assert got == ["y", "z"]
    assert stream.dropped == 2


async def test_a_failing_consumer_cancels_the_block_and_propagates() -> None:
    async def broken(events: EventStream) -> None:
        async for _ in events:
            raise RuntimeError("consumer broke")

    reached_end = False
    with pytest.RaisesGroup(pytest.RaisesExc(RuntimeError, match="consumer broke")):
        async with Bus() as bus:
            bus.consume(broken, OrderPlaced)
            await bus.publish(OrderPlaced(order_id="o", total=1.0))
            await anyio.sleep(5)  # cancelled by the consumer's failure
            reached_end = True
    assert not reached_end


async def test_the_blocks_own_exception_propagates_as_itself() -> None:
    async def idle(events: EventStream) -> None:
        async for _ in events:
            pass

    async def fails(consumer: bool) -> None:
        async with Bus() as bus:
            if consumer:
                bus.consume(idle, OrderPlaced)
            raise KeyError("mine")

    with pytest.raises(KeyError, match="mine"):
        await fails(consumer=True)
    with pytest.raises(KeyError, match="mine"):
        await fails(consumer=False)


async def test_consume_needs_async_with_and_an_async_function() -> None:
    async def fine(events: EventStream) -> None:
        pass

    def sync(events: EventStream) -> None:
        pass

    bus = Bus()
    with pytest.raises(ConfigError, match=r"enter the bus with 'async with Bus\(\) as bus:'"):
        bus.consume(fine, OrderPlaced)
    async with Bus() as bus:
        with pytest.raises(ConfigError, match=r"consume\(\) takes an async function"):
            bus.consume(sync, OrderPlaced)  # type: ignore[arg-type]
    with pytest.raises(BusClosedError):
        bus.consume(fine, OrderPlaced)


async def test_a_consumer_may_publish_until_the_bus_closes() -> None:
    echoed: list[Any] = []

    async def echo(events: EventStream) -> None:
        async for event in events:
            try:
                await bus.publish(EpisodeEnd(episode_id=event.order_id))  # type: ignore[attr-defined]
            except BusClosedError:
                echoed.append("closed")

    async with Bus() as bus:
        bus.subscribe(EpisodeEnd, lambda *, event, **kw: echoed.append(event.episode_id))
        bus.consume(echo, OrderPlaced)
        await bus.publish(OrderPlaced(order_id="a", total=1.0))
        await anyio.wait_all_tasks_blocked()
        await bus.publish(OrderPlaced(order_id="b", total=1.0))
    assert echoed == ["a", "closed"]
