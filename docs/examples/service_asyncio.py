"""An asyncio service with its own events on the bus: the shop of docs/embedding.md.

Publishes orders, declines and shipments (``shop.py`` defines them), handles them with a
callback class, a subscribed function and a consumer task the bus owns, records them, and
shows a late stream catching up from the retained history. Run it with a path to keep the
recording (``python service_asyncio.py shop.msgpack``); it prints the callback's final state
as JSON on its last line.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

import msgspec
from shop import OrderPlaced, OrderShipped, PaymentDeclined, Revenue

from hookbus.kernel import Bus, EventStream, Publisher, Recorder


async def audit(events: EventStream) -> None:
    """A consumer task: it ends by itself when the bus closes, after what is buffered."""
    async for event in events:
        print(f"audit: {event.hook} {event.order_id} (seq {event.seq})")  # type: ignore[attr-defined]


def ship(*, event: OrderShipped, courier: str, **kwargs: Any) -> None:
    print(f"shipped {event.order_id} with {courier}")


async def serve(recording: str) -> dict[str, Any]:
    revenue = Revenue()
    recorder = Recorder(
        recording, hooks=[t.hook for t in (OrderPlaced, PaymentDeclined, OrderShipped)]
    )
    async with Bus([revenue, recorder], statistics=True) as bus:
        bus.subscribe(OrderShipped, ship)
        bus.retain(OrderPlaced, last=100)  # so that a stream opened later can catch up
        bus.consume(audit, OrderPlaced, PaymentDeclined, buffer=10)  # subscribed now
        shop = Publisher(bus, "shop")  # numbers the shop's events: seq 0, 1, 2, ...
        for i, total in enumerate([12.5, 3.25, 99.0, 0.1 + 0.2]):
            await shop.publish(OrderPlaced, order_id=f"o{i}", total=total, items=["tea"] * i)
            await shop.publish(OrderShipped, {"courier": "bike"}, order_id=f"o{i}")
        for i in range(3):
            await shop.publish(PaymentDeclined, order_id=f"o{i}", reason="card expired")
        control = shop.take_control()  # what the handlers asked for, combined
        print(f"handlers asked: {control}")
        async with bus.stream(OrderPlaced, history=2) as late:  # a client connecting late
            print(f"late stream starts with {[(await late.receive()).seq for _ in range(2)]}")
        stats = bus.statistics()  # statistics=True: per-handler calls and latencies
        orders = stats.handlers["on_order_placed"]["Revenue.on_order_placed"]
        print(f"subscribers {stats.subscribers}; Revenue saw {orders.calls} orders")
    # Leaving the block closed the bus: the audit task drained its stream and returned.
    return revenue.get_state()


if __name__ == "__main__":
    folder = tempfile.mkdtemp()
    path = sys.argv[1] if len(sys.argv) > 1 else str(Path(folder) / "shop.msgpack")
    state = asyncio.run(serve(path))
    print(f"recorded to {path}")
    print(msgspec.json.encode(state).decode())
