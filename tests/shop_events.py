"""A small shop's own event types and callbacks: importable by name, by recordings (whose
headers name the types) and by worker processes alike."""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec
import numpy as np

from hookbus.events import BaseEvent, EpisodeEnd
from hookbus.kernel import Bus, Callback, Control, Publisher


class OrderPlaced(BaseEvent, frozen=True, kw_only=True, tag="order_placed"):
    """A customer placed an order (hook ``on_order_placed``, derived from the name)."""

    order_id: str
    total: float
    items: list[str] = msgspec.field(default_factory=list)


class PaymentFailed(BaseEvent, frozen=True, kw_only=True, tag="payment_failed"):
    """A payment was declined; a handler may ask to stop (``accepts_control``)."""

    hook: ClassVar[str] = "on_payment_declined"  # given, not derived
    accepts_control: ClassVar[bool] = True

    order_id: str
    reason: str = ""


class SensorRead(BaseEvent, frozen=True, kw_only=True, tag="sensor_read"):
    """A reading with a numpy payload, handed a live ``device`` besides the event."""

    live_args: ClassVar[tuple[str, ...]] = ("device",)

    values: Any = None


class Revenue(Callback):
    """Deterministic state from the shop's events: what replay must reproduce exactly."""

    def __init__(self) -> None:
        super().__init__()
        self.total = 0.0
        self.orders: list[str] = []
        self.declined = 0
        self.readings = 0.0

    def on_order_placed(self, *, event: OrderPlaced, **kwargs: Any) -> None:
        self.total += event.total * 1.0000001  # floats that do not round-trip by luck
        self.orders.append(event.order_id)

    def on_payment_declined(self, *, event: PaymentFailed, **kwargs: Any) -> Control | None:
        self.declined += 1
        return Control(stop_training=True, reason=event.reason) if self.declined >= 3 else None

    def on_sensor_read(self, *, event: SensorRead, **kwargs: Any) -> None:
        self.readings += float(np.sum(event.values))

    def get_state(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "orders": self.orders,
            "declined": self.declined,
            "readings": self.readings,
        }


async def shop_day(bus: Bus) -> None:
    """Publish a small day of the shop: orders, declines, numpy readings, one hook event."""
    shop, lab = Publisher(bus, "shop"), Publisher(bus, "lab", device=None)
    for i in range(20):
        await shop.publish(OrderPlaced, order_id=f"o{i}", total=0.1 * i + 1 / 3, items=["x"] * i)
        if i % 7 == 3:
            await shop.publish(PaymentFailed, order_id=f"o{i}", reason="card")
        await lab.publish(SensorRead, values=np.linspace(0, 1, 5, dtype=np.float32) * i)
    await bus.publish(EpisodeEnd(source="env_runner:0", seq=0, episode_id="e"))


class ShopOnRunner(Callback):
    """Runs where the runners run (in worker processes and Ray actors too): publishes an
    OrderPlaced per finished episode, through a Publisher of its own source on the runner's
    bus; the Algorithm's observers get them, forwarded as the hooks' events are."""

    def __init__(self) -> None:
        super().__init__()
        self.publishers: dict[int, Publisher] = {}  # in-process runners share an instance

    async def on_episode_end(self, *, episode: Any, env_runner: Any, **kwargs: Any) -> None:
        index = env_runner.worker_index
        if index not in self.publishers:
            self.publishers[index] = Publisher(env_runner.bus, f"shop:{index}")
        total = float(episode.get_return())
        await self.publishers[index].publish(OrderPlaced, order_id=episode.id_, total=total)

    def __getstate__(self) -> dict[str, Any]:  # sent to workers as a fresh instance
        return {"publishers": {}}
