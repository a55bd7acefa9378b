"""A small shop's own events and callbacks: the service in docs/embedding.md.

The services (``service_asyncio.py``, ``service_trio.py``) and the replay test
(``test_shop_replay.py``) import this module; a recording names these types as
``shop:OrderPlaced`` and so on, and a reader decodes them because it imported this module
first (reading never imports what a recording names). Run on its own, it prints the hook
each type gets.
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec

from hookbus.events import BaseEvent
from hookbus.kernel import Callback, Control


class OrderPlaced(BaseEvent, frozen=True, kw_only=True, tag="order_placed"):
    """A customer placed an order. Its hook, derived from the name: ``on_order_placed``."""

    order_id: str
    total: float
    items: list[str] = msgspec.field(default_factory=list)


class PaymentDeclined(BaseEvent, frozen=True, kw_only=True, tag="payment_declined"):
    """A payment was refused. Its handlers may return a Control (to stop taking orders)."""

    accepts_control: ClassVar[bool] = True

    order_id: str
    reason: str = ""


class OrderShipped(BaseEvent, frozen=True, kw_only=True, tag="order_shipped"):
    """An order left the warehouse; handlers also get the live ``courier`` (not recorded)."""

    hook: ClassVar[str] = "on_shipped"  # given rather than derived (on_order_shipped)
    live_args: ClassVar[tuple[str, ...]] = ("courier",)

    order_id: str


class Revenue(Callback):
    """Deterministic state from the shop's events: what a replay must reproduce exactly."""

    def __init__(self) -> None:
        super().__init__()
        self.total = 0.0
        self.orders = 0
        self.declined = 0

    def on_order_placed(self, *, event: OrderPlaced, **kwargs: Any) -> None:
        self.total += event.total
        self.orders += 1

    def on_payment_declined(self, *, event: PaymentDeclined, **kwargs: Any) -> Control | None:
        self.declined += 1
        if self.declined >= 3:  # too many refusals: ask whoever publishes to stop
            return Control(stop_training=True, reason="payments failing")
        return None

    def get_state(self) -> dict[str, Any]:
        return {"total": self.total, "orders": self.orders, "declined": self.declined}


if __name__ == "__main__":
    for cls in (OrderPlaced, PaymentDeclined, OrderShipped):
        print(f"{cls.__name__:<16} tag {cls.__struct_config__.tag!r:<20} hook {cls.hook}")
