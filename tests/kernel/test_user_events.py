"""Your own event types on the bus: every guarantee the hooks have, on asyncio and trio."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any, ClassVar

import anyio
import numpy as np
import pytest

from hookbus.events import BaseEvent, EpisodeEnd
from hookbus.kernel import (
    PLUGIN_GROUP,
    Bus,
    BusClosedError,
    Callback,
    ConfigError,
    Control,
    HookbusWarning,
    Publisher,
)

sys.path.insert(0, str(Path(__file__).parents[1]))
from shop_events import OrderPlaced, PaymentFailed, Revenue, SensorRead

pytestmark = pytest.mark.anyio


def order(seq: int = 0, total: float = 1.0) -> OrderPlaced:
    return OrderPlaced(source="shop", seq=seq, order_id=f"o{seq}", total=total)


async def test_subscribe_by_type_or_hook_name_and_publish() -> None:
    seen: list[tuple[str, str]] = []

    def by_type(*, event: OrderPlaced, **kwargs: Any) -> None:
        seen.append(("type", event.order_id))

    async def by_name(*, event: OrderPlaced, **kwargs: Any) -> None:
        seen.append(("name", event.order_id))

    async with Bus() as bus:
        assert not bus.has_subscribers(OrderPlaced)
        bus.subscribe(OrderPlaced, by_type)
        bus.subscribe("on_order_placed", by_name)
        assert bus.has_subscribers(OrderPlaced)
        assert await bus.publish(order(0)) is None
        bus.unsubscribe(OrderPlaced, by_type)
        await bus.publish(order(1))
    assert seen == [("type", "o0"), ("name", "o0"), ("name", "o1")]


async def test_an_event_nobody_subscribed_to_is_dropped() -> None:
    async with Bus() as bus:
        assert await bus.publish(order()) is None  # as in every pub/sub: nobody, nothing
        late: list[str] = []
        bus.subscribe(OrderPlaced, lambda *, event, **kw: late.append(event.order_id))
        await bus.publish(order(1))
    assert late == ["o1"]


async def test_callbacks_classes_and_per_hook_callables_take_user_hooks() -> None:
    log: list[str] = []

    class Audit(Callback):
        def on_order_placed(self, *, event: OrderPlaced, **kwargs: Any) -> None:
            log.append(f"class {event.order_id}")

    def per_hook(*, event: OrderPlaced, **kwargs: Any) -> None:
        log.append(f"callable {event.order_id}")

    async with Bus(Audit, on_order_placed=per_hook) as bus:
        bus.subscribe(OrderPlaced, lambda **kw: log.append("subscribed"))
        await bus.publish(order())
        assert bus.statistics().subscribers == {"on_order_placed": 3}
    assert log == ["class o0", "callable o0", "subscribed"]


async def test_a_misspelt_user_hook_warns_with_the_right_name() -> None:
    class Typo(Callback):
        def on_order_place(self, **kwargs: Any) -> None: ...

    with pytest.warns(HookbusWarning, match=r"did you mean 'on_order_placed'"):
        Bus(Typo)


async def test_the_hook_of_a_type_not_yet_defined_says_to_define_or_import_it() -> None:
    # on_order_returned is no hook until a class OrderReturned is defined: the closest hook
    # is suggested, and so is the likelier fix, importing the type.
    with pytest.raises(
        ConfigError,
        match=r"unknown hook 'on_order_returned' \(did you mean 'on_order_placed'\?\); known "
        r"hooks: .*\. An event type of yours has its hook only once its class is defined: "
        r"if 'on_order_returned' is yours, define or import its type \(e\.g\. OrderReturned",
    ):
        Bus().subscribe("on_order_returned", lambda **kw: None)


async def test_publishing_a_wrong_field_names_the_type_and_its_fields() -> None:
    async with Bus() as bus:
        bus.subscribe(OrderPlaced, lambda **kw: None)
        shop = Publisher(bus, "shop")
        with pytest.raises(
            TypeError,
            match=r"^OrderPlaced has no field 'totl' \(did you mean 'total'\?\); its fields: "
            r"order_id, total, items \(source and seq are the publisher's\)$",
        ):
            await shop.publish(OrderPlaced, order_id="o1", totl=2.0)
        with pytest.raises(
            TypeError,
            match=r"cannot build OrderPlaced: Missing required argument 'total'; its fields: "
            r"order_id, total, items",
        ):
            await shop.publish(OrderPlaced, order_id="o1")
        event = await shop.publish(OrderPlaced, order_id="o1", total=2.0)
        assert event is not None
        assert event.seq == 0  # the refused ones took no seq: the stream stays gap-free


async def test_handler_signatures_are_checked_against_the_types_live_args() -> None:
    def needs_request(*, event: Any, request: Any) -> None: ...

    def takes_device(*, event: SensorRead, device: Any) -> None: ...

    bus = Bus()
    with pytest.raises(ConfigError, match=r"requires 'request', which 'on_order_placed' does"):
        bus.subscribe(OrderPlaced, needs_request)
    bus.subscribe(SensorRead, takes_device)  # names every argument: no **kwargs needed
    bus.close()


async def test_live_arguments_of_a_user_type_reach_its_handlers() -> None:
    got: list[Any] = []
    async with Bus() as bus:
        bus.subscribe(SensorRead, lambda *, event, device, **kw: got.append((device, kw)))
        await bus.publish(SensorRead(values=np.ones(3)), device="probe-1")
        with pytest.raises(TypeError):
            await bus.publish(SensorRead(), unknown=1)
    assert got == [("probe-1", {})]


async def test_ordering_constraints_and_priorities_apply() -> None:
    log: list[str] = []

    class Ledger(Callback):
        def on_order_placed(self, **kwargs: Any) -> None:
            log.append("ledger")

    class Mailer(Callback):
        after: ClassVar[list[str]] = ["Ledger"]

        def on_order_placed(self, **kwargs: Any) -> None:
            log.append("mailer")

    def fraud_check(**kwargs: Any) -> None:
        log.append("fraud")

    async with Bus([Mailer, Ledger]) as bus:
        bus.subscribe(OrderPlaced, fraud_check, before=Ledger)
        bus.subscribe(OrderPlaced, lambda **kw: log.append("first"), priority=5)
        await bus.publish(order())
        names = bus.explain(OrderPlaced).names
    assert log == ["first", "fraud", "ledger", "mailer"]
    assert [name.rsplit(".", 1)[-1] for name in names] == [
        "<lambda>",
        "fraud_check",
        "on_order_placed",
        "on_order_placed",
    ]
    assert names[2].endswith("Ledger.on_order_placed")


async def test_error_policies_per_subscriber() -> None:
    log: list[str] = []

    def broken(**kwargs: Any) -> None:
        raise RuntimeError("boom")

    async with Bus() as bus:
        bus.subscribe(OrderPlaced, broken, on_error="log")
        bus.subscribe(OrderPlaced, lambda **kw: log.append("after"))
        await bus.publish(order())
        assert log == ["after"]
        assert bus.statistics().errors_by_hook == {"on_order_placed": 1}
    async with Bus() as strict:
        strict.subscribe(OrderPlaced, broken)
        with pytest.raises(RuntimeError, match="boom") as info:
            await strict.publish(order())
        assert any("on_order_placed" in note for note in info.value.__notes__)


async def test_deadlines_cancel_a_slow_async_handler() -> None:
    async def slow(**kwargs: Any) -> None:
        await anyio.sleep(10)

    async with Bus(deadline=0.01, on_error="log") as bus:
        bus.subscribe(OrderPlaced, slow)
        await bus.publish(order())
        stats = bus.statistics()
    assert stats.errors_by_hook == {"on_order_placed": 1}


async def test_statistics_count_user_handlers() -> None:
    async with Bus(statistics=True) as bus:
        bus.subscribe(OrderPlaced, lambda **kw: None)
        for seq in range(5):
            await bus.publish(order(seq))
        handlers = bus.statistics().handlers
    (stat,) = handlers["on_order_placed"].values()
    assert stat.calls == 5


async def test_a_type_that_says_so_carries_a_control() -> None:
    async with Bus(Revenue) as bus:
        declined = PaymentFailed(order_id="o1", reason="card")
        assert await bus.publish(declined) is None
        assert await bus.publish(declined) is None
        control = await bus.publish(declined)
    assert isinstance(control, Control)
    assert control.stop_training
    assert control.requested_by == {"stop_training": ("Revenue.on_payment_declined",)}


async def test_a_control_from_a_type_that_does_not_accept_one_is_refused() -> None:
    async with Bus() as bus:
        bus.subscribe(OrderPlaced, lambda **kw: Control(stop_training=True))
        with pytest.raises(ConfigError, match=r"'on_order_placed' does not accept; only .*"):
            await bus.publish(order())


async def test_stream_and_forward() -> None:
    async with Bus() as bus:
        bus.subscribe(EpisodeEnd, lambda **kw: None)
        async with bus.stream(OrderPlaced, buffer=4) as orders, bus.stream(buffer=4) as everything:
            await bus.publish(order(0))
            await bus.forward(order(1))  # observers only: what a worker forwarded
            await bus.publish(EpisodeEnd())
            got = [(await orders.receive()).seq, (await orders.receive()).seq]
            mixed = [type(await everything.receive()).__name__ for _ in range(3)]
    assert got == [0, 1]
    assert mixed == ["OrderPlaced", "OrderPlaced", "EpisodeEnd"]
    assert "on_order_placed" not in bus.statistics().subscribers  # streams left


async def test_observed_hooks_include_user_hooks() -> None:
    async with Bus() as bus:
        bus.subscribe(OrderPlaced, lambda **kw: None)
        assert "on_order_placed" in bus.observed_hooks()


async def test_a_publisher_numbers_user_events_per_source() -> None:
    seen: list[tuple[str, int, str]] = []
    async with Bus() as bus:
        shop = Publisher(bus, "shop")
        assert not shop.wants(OrderPlaced)
        assert await shop.publish(OrderPlaced, order_id="skipped", total=0.0) is None
        bus.subscribe(
            OrderPlaced,
            lambda *, event, **kw: seen.append((event.source, event.seq, event.order_id)),
        )
        assert shop.wants(OrderPlaced)
        for i in range(3):
            event = await shop.publish(OrderPlaced, order_id=f"o{i}", total=1.0)
            assert isinstance(event, OrderPlaced)
        lab = Publisher(bus, "lab", device="probe")
        bus.subscribe(SensorRead, lambda *, device, **kw: seen.append(("lab", -1, device)))
        await lab.publish(SensorRead, values=[1.0])
    assert seen == [("shop", 0, "o0"), ("shop", 1, "o1"), ("shop", 2, "o2"), ("lab", -1, "probe")]


async def test_the_first_use_of_an_invalid_type_is_one_config_error() -> None:
    class Loose(BaseEvent, frozen=False, tag="loose"):
        pass

    bus = Bus()
    for attempt in (
        lambda: bus.subscribe(Loose, lambda **kw: None),
        lambda: bus.subscribe("on_loose", lambda **kw: None),
        lambda: bus.has_subscribers(Loose),
        lambda: Publisher(bus, "x").wants(Loose),
        lambda: Bus(on_loose=lambda **kw: None),
    ):
        with pytest.raises(ConfigError, match=r"Loose is not frozen"):
            attempt()
    with pytest.raises(ConfigError, match=r"cannot publish Loose\(.*\): not a hookbus event; .*"):
        await bus.publish(Loose())
    bus.close()


async def test_a_closed_bus_refuses_user_events_too() -> None:
    bus = Bus()
    bus.close()
    with pytest.raises(BusClosedError):
        await bus.publish(order())
    with pytest.raises(BusClosedError):
        bus.subscribe(OrderPlaced, lambda **kw: None)


# --- plugins declaring their own events -------------------------------------------------------


@pytest.fixture
def audit_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Install a plugin distribution whose module defines an event type of its own."""
    (tmp_path / "hb_audit_plugin.py").write_text(
        textwrap.dedent(
            """
            from hookbus.events import BaseEvent
            from hookbus.kernel import Callback

            class AuditEntry(BaseEvent, frozen=True, kw_only=True, tag="hb_audit_entry"):
                what: str = ""

            class AuditLog(Callback):
                def __init__(self):
                    self.entries = []

                def on_audit_entry(self, *, event, **kwargs):
                    self.entries.append(event.what)
            """
        )
    )
    info = tmp_path / "hb_audit_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hb-audit-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{PLUGIN_GROUP}]\naudit = hb_audit_plugin:AuditLog\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


async def test_a_plugin_adds_an_event_type_others_handle_by_name(audit_plugin: Path) -> None:
    class AlsoAudits(Callback):  # given before the plugin is loaded: its hook is known anyway
        def __init__(self) -> None:
            self.seen: list[str] = []

        def on_audit_entry(self, *, event: Any, **kwargs: Any) -> None:
            self.seen.append(event.what)

    async with Bus(AlsoAudits, plugins=["audit"]) as bus:
        from hb_audit_plugin import AuditEntry  # type: ignore[import-not-found]

        await bus.publish(AuditEntry(what="refund"))
        also, plugin = bus.callbacks
    assert plugin.entries == ["refund"]
    assert also.seen == ["refund"]
