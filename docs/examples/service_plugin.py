"""A plugin that adds an event type of its own to a service (docs/embedding.md).

The plugin, ``shop_fraud``, is a distribution with an entry point in ``hookbus.plugins``; its
module defines the event type ``FraudSuspected`` and a Callback handling it. Loading the
plugin defines the type, so the app, which never imports the plugin, handles and publishes
it by its hook name. To stay self-contained this script installs the plugin into a temporary
folder the way pip would (a module and a ``.dist-info`` with ``entry_points.txt``).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
from shop import OrderPlaced, Revenue

from hookbus.events import event_type
from hookbus.kernel import Bus, Publisher, available_plugins

PLUGIN = '''
from hookbus.events import BaseEvent
from hookbus.kernel import Callback


class FraudSuspected(BaseEvent, frozen=True, kw_only=True, tag="shop_fraud.suspected"):
    """An order that looks like fraud: the plugin's own event type (on_fraud_suspected)."""

    order_id: str
    score: float


class FraudDesk(Callback):
    """Holds every suspected order for a human to look at."""

    def __init__(self):
        self.held = []

    def on_fraud_suspected(self, *, event, **kwargs):
        self.held.append(event.order_id)
'''


def install_plugin(folder: Path) -> None:
    (folder / "shop_fraud.py").write_text(PLUGIN)
    info = folder / "shop_fraud-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shop-fraud\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[hookbus.plugins]\nfraud = shop_fraud:FraudDesk\n")
    sys.path.insert(0, str(folder))


async def main() -> None:
    print(f"installed plugins: {list(available_plugins())}")
    async with Bus(Revenue, plugins=["fraud"]) as bus:  # loading it defines its event type
        fraud_suspected = event_type("on_fraud_suspected")  # the app never imports the plugin
        print(f"the plugin added {fraud_suspected.__name__} (hook {fraud_suspected.hook})")
        alerts = Publisher(bus, "screening")

        async def screen(*, event: OrderPlaced, **kwargs: Any) -> None:
            if event.total > 500:
                await alerts.publish(fraud_suspected, order_id=event.order_id, score=0.9)

        bus.subscribe(OrderPlaced, screen)
        bus.subscribe("on_fraud_suspected", lambda *, event, **kw: print(f"paging: {event}"))
        shop = Publisher(bus, "shop")
        for i, total in enumerate([20.0, 950.0, 35.5]):
            await shop.publish(OrderPlaced, order_id=f"o{i}", total=total)
        revenue, desk = bus.callbacks
    print(f"revenue {revenue.get_state()}; the plugin's desk holds {desk.held}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        install_plugin(Path(folder))
        anyio.run(main)
