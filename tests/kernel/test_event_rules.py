"""A package teaches replay and check_lifecycle about its event types through ``hookbus.rules``.

The plugin is installed for real (a distribution's metadata on ``sys.path``) in a fresh
interpreter, since the kernel loads the installed rules once per process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points
from pathlib import Path

from hookbus.kernel import RULES_GROUP

SHOP = """
from typing import Any, ClassVar

from hookbus.events import BaseEvent


class OrderPlaced(BaseEvent, frozen=True, kw_only=True, tag="rules_order_placed"):
    live_args: ClassVar[tuple[str, ...]] = ("basket",)
    order_id: str = ""
    item: str = ""


class OrderShipped(BaseEvent, frozen=True, kw_only=True, tag="rules_order_shipped"):
    live_args: ClassVar[tuple[str, ...]] = ("basket",)
    order_id: str = ""


class Baskets:
    def __init__(self) -> None:
        self.baskets: dict[str, list[str]] = {}
        self.done: list[str] = []

    def live_arguments(self, event: Any) -> dict[str, Any]:
        basket = self.baskets.setdefault(event.order_id, [])
        if isinstance(event, OrderPlaced):
            basket.append(event.item)
        return {"basket": list(basket)}

    def published(self, event: Any) -> None:
        self.done.append(event.hook)


class Shipping:
    def __init__(self) -> None:
        self.placed: set[str] = set()

    def restarts(self, event: Any) -> bool:
        return False

    def check(self, event: Any, violations: Any) -> None:
        if isinstance(event, OrderPlaced):
            self.placed.add(event.order_id)
        elif event.order_id not in self.placed:
            violations.flag(event, "shipped before it was placed", OrderPlaced)

    def finish(self, violations: Any, allow_open: bool) -> dict[str, int]:
        return {"episodes": len(self.placed)}


class ShopRules:
    types = (OrderPlaced, OrderShipped)

    def replay_rules(self, metrics_logger: Any, max_open: int) -> Baskets:
        return Baskets()

    def lifecycle_rules(self) -> Shipping:
        return Shipping()


RULES = ShopRules()
"""

SCRIPT = """
import anyio
import pytest

from hookbus.kernel import LifecycleError, check_lifecycle, replay
from shop_rules import OrderPlaced, OrderShipped

events = [
    OrderPlaced(source="shop", seq=0, order_id="a", item="tea"),
    OrderPlaced(source="shop", seq=1, order_id="a", item="cake"),
    OrderShipped(source="shop", seq=2, order_id="a"),
]
seen = []


def on_order_shipped(*, event, basket):
    seen.append(basket)


anyio.run(lambda: replay(events, on_order_shipped=[on_order_shipped]))
assert seen == [["tea", "cake"]], seen
summary = check_lifecycle(events)
assert (summary.events, summary.user_events, summary.episodes) == (3, 0, 1), summary
with pytest.raises(LifecycleError, match="shipped before it was placed"):
    check_lifecycle([events[0], OrderShipped(source="shop", seq=1, order_id="b")])
with pytest.raises(LifecycleError, match="seq is not the source's next one"):
    check_lifecycle([events[0], events[2]])  # the kernel numbers a plugin's events too
print("ok")
"""


def test_hookbus_installs_the_hooks_rules_through_the_entry_point() -> None:
    values = {point.value for point in entry_points(group=RULES_GROUP)}
    assert "hookbus.runners.episodes:RULES" in values


def test_an_installed_package_adds_rules_for_its_event_types(tmp_path: Path) -> None:
    (tmp_path / "shop_rules.py").write_text(textwrap.dedent(SHOP))
    info = tmp_path / "shop_rules-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shop-rules\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{RULES_GROUP}]\nshop = shop_rules:RULES\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


SETTINGS_SCRIPT = """
from hookbus.kernel import Recorder, ReplayOutcome, replay_into
from shop_rules import OrderPlaced, OrderShipped, ShopRules

class Counted:  # replay state of rules that take the replay's settings and report iterations
    def __init__(self, settings):
        self.settings = settings
        self.shipped = 0

    def live_arguments(self, event):
        return {"basket": []}

    def published(self, event):
        self.shipped += isinstance(event, OrderShipped)

    def outcome(self):
        return ReplayOutcome([{"shipped": self.shipped, "producer": self.settings.producer}])

seen = []

def replay_rules(self, metrics_logger, max_open, settings):
    seen.append(settings)
    return Counted(settings)

ShopRules.replay_rules = replay_rules  # before the kernel loads the rules: once per process

recorder = Recorder("orders.msgpack", producer="shop", producer_version="1.2")
for i, event in enumerate([
    OrderPlaced(source="shop", seq=0, order_id="a", item="tea"),
    OrderShipped(source="shop", seq=1, order_id="a"),
]):
    recorder.record(event=event)
recorder.close()
result = replay_into("orders.msgpack", merge="pooled")
assert result.iterations == [{"shipped": 1, "producer": "shop"}], result.iterations
assert (seen[0].producer, seen[0].merge, seen[0].logger_given) == ("shop", "pooled", False)
told = replay_into("orders.msgpack", producer="elsewhere")
assert told.iterations == [{"shipped": 1, "producer": "elsewhere"}], told.iterations
print("ok")
"""


def test_rules_taking_settings_learn_the_producer_and_report_iterations(tmp_path: Path) -> None:
    (tmp_path / "shop_rules.py").write_text(textwrap.dedent(SHOP))
    info = tmp_path / "shop_rules-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shop-rules\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{RULES_GROUP}]\nshop = shop_rules:RULES\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-c", SETTINGS_SCRIPT],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
