"""Event types of your own: defining one registers it; an invalid one is one clear ConfigError."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import numpy as np
import pytest

from hookbus.events import (
    HOOKS,
    BaseEvent,
    ConfigError,
    EpisodeStep,
    codec,
    event_type,
    event_types,
    event_union,
)
from hookbus.kernel import ConfigError as KernelConfigError

sys.path.insert(0, str(Path(__file__).parents[1]))
from shop_events import OrderPlaced, PaymentFailed, SensorRead


class HTTPRequestDone(BaseEvent, frozen=True, kw_only=True, tag="http_request_done"):
    status: int = 200


class ShopEvent(BaseEvent, frozen=True, kw_only=True):
    """A base with shared fields, not an event itself."""

    __abstract__ = True

    shop: str = ""


class Refund(ShopEvent, frozen=True, kw_only=True, tag="refund"):
    amount: float = 0.0


def test_the_kernel_and_events_share_one_config_error() -> None:
    assert KernelConfigError is ConfigError


def test_a_subclass_is_an_event_type_with_a_derived_hook_name() -> None:
    assert OrderPlaced.hook == "on_order_placed"
    assert HTTPRequestDone.hook == "on_http_request_done"
    assert event_type(OrderPlaced) is OrderPlaced
    assert event_type("on_order_placed") is OrderPlaced
    assert event_types()["on_order_placed"] is OrderPlaced


def test_a_hook_name_may_be_given() -> None:
    assert PaymentFailed.hook == "on_payment_declined"
    assert event_type("on_payment_declined") is PaymentFailed
    assert "on_payment_failed" not in event_types()


def test_the_hooks_come_first_then_yours_in_definition_order() -> None:
    names = list(event_types())
    assert names[: len(HOOKS)] == list(HOOKS)
    assert names.index("on_order_placed") < names.index("on_http_request_done")
    assert list(HOOKS) == list(event_types())[: len(HOOKS)]  # HOOKS stays the hooks' own
    assert "on_order_placed" not in HOOKS


def test_an_abstract_base_is_no_event_type_but_its_subclasses_are() -> None:
    assert event_type(Refund) is Refund
    assert Refund(shop="s", amount=1.0).shop == "s"
    with pytest.raises(ConfigError, match=r"ShopEvent is an abstract event base"):
        event_type(ShopEvent)


def test_user_events_round_trip_in_one_union_with_the_hooks() -> None:
    events = [
        EpisodeStep(source="env_runner:0", seq=0, reward=1.5),
        OrderPlaced(source="shop", seq=0, order_id="o1", total=9.99, items=["a", "b"]),
        SensorRead(source="lab", seq=3, values=np.arange(6, dtype=np.float32).reshape(2, 3)),
    ]
    for data, decode in (
        (codec.encode_msgpack(events), codec.decode_msgpack),
        (codec.encode_json(events), codec.decode_json),
    ):
        again = decode(data, list[event_union()])
        assert [type(e) for e in again] == [type(e) for e in events]
        assert again[1] == events[1]
        np.testing.assert_array_equal(again[2].values, events[2].values)
        assert again[2].values.dtype == np.float32


def test_a_type_that_is_not_an_event_is_named_with_what_is_allowed() -> None:
    class NotAStruct:
        pass

    class PlainStruct(msgspec.Struct, frozen=True):
        pass

    for bad in (NotAStruct, PlainStruct, dict, 42):
        with pytest.raises(ConfigError, match=r"is not a hookbus event type; use one of .*"):
            event_type(bad)
    with pytest.raises(ConfigError, match=r"OrderPlaced, .*subclassing hookbus.events.BaseEvent"):
        event_type(NotAStruct)


# --- refusals: each a ConfigError when the class, or its hook name, is used -------------------


def test_an_event_type_that_is_not_frozen_is_refused() -> None:
    class Mutable(BaseEvent, frozen=False, tag="mutable"):
        x: int = 0

    with pytest.raises(ConfigError, match=r"event type .*Mutable is not frozen.*drop frozen=False"):
        event_type(Mutable)
    with pytest.raises(ConfigError, match=r"Mutable is not frozen"):
        event_type("on_mutable")  # its hook name says why too


def test_another_tag_field_or_a_tag_that_is_no_str_is_refused() -> None:
    class OtherField(BaseEvent, frozen=True, tag_field="kind", tag="other_field"):
        pass

    class IntTag(BaseEvent, frozen=True, tag=7):
        pass

    with pytest.raises(ConfigError, match=r"OtherField has the tag field 'kind'; every event's"):
        event_type(OtherField)
    with pytest.raises(ConfigError, match=r"IntTag has the tag 7; a tag is a str"):
        event_type(IntTag)


def test_a_clashing_tag_is_refused_naming_the_holder() -> None:
    class Copycat(BaseEvent, frozen=True, tag="order_placed"):
        pass

    with pytest.raises(
        ConfigError,
        match=r"event type .*Copycat cannot register: its tag 'order_placed' is already "
        r"shop_events.OrderPlaced's; give it another: tag=\"...\"",
    ):
        event_type(Copycat)
    assert event_type("on_order_placed") is OrderPlaced  # the first stays


def test_a_clashing_hook_name_is_refused_naming_the_holder() -> None:
    class Step(BaseEvent, frozen=True, tag="my_step"):
        hook: ClassVar[str] = "on_episode_step"

    class OrderPlacedAgain(BaseEvent, frozen=True, tag="order_placed_again"):
        hook: ClassVar[str] = "on_order_placed"

    with pytest.raises(ConfigError, match=r"its hook name 'on_episode_step' is already .*Step"):
        event_type(Step)
    with pytest.raises(ConfigError, match=r"hook name 'on_order_placed' is already .*OrderPlaced"):
        event_type(OrderPlacedAgain)
    assert event_type("on_episode_step") is EpisodeStep


def test_a_bad_or_reserved_hook_name_is_refused() -> None:
    class Weird(BaseEvent, frozen=True, tag="weird"):
        hook: ClassVar[str] = "order-placed"

    class Error(BaseEvent, frozen=True, tag="error"):
        pass

    with pytest.raises(ConfigError, match=r"hook name 'order-placed'; a hook name is 'on_' and"):
        event_type(Weird)
    with pytest.raises(ConfigError, match=r"hook name 'on_error', which names an option"):
        event_type(Error)


def test_bad_live_args_or_accepts_control_are_refused() -> None:
    class Live(BaseEvent, frozen=True, tag="live_bad"):
        live_args: ClassVar[Any] = ("event",)

    class Controls(BaseEvent, frozen=True, tag="controls_bad"):
        accepts_control: ClassVar[Any] = "yes"

    with pytest.raises(ConfigError, match=r"live_args must be a tuple of distinct argument names"):
        event_type(Live)
    with pytest.raises(ConfigError, match=r"accepts_control must be True or False, got 'yes'"):
        event_type(Controls)


def test_a_refused_class_breaks_nothing_else() -> None:
    class Broken(BaseEvent, frozen=False, tag="broken"):
        pass

    assert event_type(OrderPlaced) is OrderPlaced  # other lookups go on
    assert "on_broken" not in event_types()


def test_defining_a_class_again_replaces_it() -> None:
    def define() -> type[BaseEvent]:
        class Redefined(BaseEvent, frozen=True, kw_only=True, tag="redefined"):
            n: int = 0

        return Redefined

    first, second = define(), define()  # a re-run notebook cell, importlib.reload
    assert first is not second
    assert event_type("on_redefined") is second
    with pytest.raises(ConfigError, match=r"Redefined was defined again; use its newest"):
        event_type(first)
