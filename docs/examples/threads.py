"""Publishing into a bus from other threads: refused as is, safe through publish_threadsafe.

A service's event loop owns the bus; two plain threads (blocking code: a legacy client, a
hardware poller) publish the same source's events through ``publish_threadsafe``, which
runs each publish in the bus's loop and waits. A publish awaited in a thread's own event
loop is refused with a WrongThreadError naming that way. Run: ``python threads.py``.
"""

from __future__ import annotations

import threading
from typing import Any

import anyio
import anyio.lowlevel

from hookbus.events import BaseEvent
from hookbus.kernel import Bus, Publisher, WrongThreadError


class OrderPlaced(BaseEvent, frozen=True, kw_only=True, tag="threads_example.order_placed"):
    order_id: str
    total: float


seen: dict[str, list[int]] = {"shop": [], "till": []}


def count(*, event: OrderPlaced, **kwargs: Any) -> None:
    seen[event.source].append(event.seq)


def sync_worker(bus: Bus, shop: Publisher, name: str) -> None:
    """Blocking code in a thread of its own: the thread-safe entries."""
    for i in range(100):
        shop.publish_threadsafe(OrderPlaced, order_id=f"{name}-{i}", total=3.0)
    bus.publish_threadsafe(OrderPlaced(source="till", seq=0, order_id=f"{name}-till", total=1.0))


def wrong_worker(shop: Publisher, refused: list[str]) -> None:
    """A thread running an event loop of its own, publishing directly: refused."""
    try:
        anyio.run(lambda: shop.publish(OrderPlaced, order_id="x", total=0.0))
    except WrongThreadError as exc:
        refused.append(str(exc))


async def main() -> None:
    async with Bus(on_order_placed=count) as bus:
        shop = Publisher(bus, "shop")
        threads = [threading.Thread(target=sync_worker, args=(bus, shop, n)) for n in "ab"]
        for thread in threads:
            thread.start()
        for i in range(100):  # the loop's own publishes, mixed in
            await shop.publish(OrderPlaced, order_id=f"loop-{i}", total=2.0)
            await anyio.lowlevel.checkpoint()  # let the threads' publishes in
        for thread in threads:
            await anyio.to_thread.run_sync(thread.join)
        refused: list[str] = []
        await anyio.to_thread.run_sync(wrong_worker, shop, refused)
    # Handlers saw the shop's 300 events in seq order, none twice, none missing.
    assert seen["shop"] == list(range(300)), seen["shop"]
    assert len(seen["till"]) == 2
    print(f"shop: {len(seen['shop'])} events, seq 0..{shop.seq - 1} in order; till: 2")
    print("refused:", refused[0].split(";")[0])


if __name__ == "__main__":
    anyio.run(main)
