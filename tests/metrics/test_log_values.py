"""``MetricsLogger.log_values``: a block of values logs exactly as one ``log_value`` each."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from hookbus.events.codec import encode_msgpack
from hookbus.metrics import MetricsLogger

SETTINGS = [
    pytest.param({"reduce": "mean", "window": 5}, id="mean-window"),
    pytest.param({"reduce": "min", "window": 3}, id="min-window"),
    pytest.param({"reduce": "max", "window": 40}, id="max-window"),
    pytest.param({"reduce": "sum", "window": 7}, id="sum-window"),
    pytest.param({"reduce": "mean"}, id="ema"),
    pytest.param({"reduce": "sum", "clear_on_reduce": True}, id="sum"),
    pytest.param({"reduce": "lifetime_sum"}, id="lifetime-sum"),
    pytest.param({"reduce": "percentiles", "window": 10}, id="percentiles"),
    pytest.param({"reduce": None, "window": 4}, id="series-window"),
]

BLOCKS: list[list[Any]] = [
    [1.5, 2.5, float("nan"), -3.0],
    list(range(37)),  # ints, past the buffer's capacity: compacted where push() would
    [],
    [float("nan")],
    [0.25] * 90,
    [7],  # one value: the first log of a new key takes it, nothing is left for the block
]


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("settings", SETTINGS)
def test_a_block_logs_as_many_single_logs(settings: dict[str, Any]) -> None:
    one_by_one, blocks = MetricsLogger(), MetricsLogger()
    for block in [[5], *BLOCKS]:
        for value in block:
            one_by_one.log_value("k", value, **settings)
        blocks.log_values("k", block, **settings)
        assert same(blocks.peek("k", default=None), one_by_one.peek("k", default=None))
        # Each reduce period hands over the same values (what parallel runners merge).
        assert encode_msgpack(blocks.reduce()) == encode_msgpack(one_by_one.reduce())
    assert encode_msgpack(blocks.get_state()) == encode_msgpack(one_by_one.get_state())


def test_ints_stay_ints_and_nans_are_dropped() -> None:
    logger = MetricsLogger()
    logger.log_values("len", [float("nan"), 20, 22], reduce="max", window=10)
    assert logger.peek("len") == 22
    assert type(logger.peek("len")) is int


def test_a_bad_block_is_refused_whole() -> None:
    logger = MetricsLogger()
    logger.log_values("k", [1.0, 2.0], window=4)
    with pytest.raises(TypeError, match="cannot log"):
        logger.log_values("k", [3.0, "four"], window=4)
    with pytest.raises(TypeError, match="cannot log"):
        logger.log_values("k", [[1.0, 2.0], [3.0, 4.0]], window=4)
    assert logger.peek("k") == 1.5  # nothing of the bad blocks went in


@pytest.mark.parametrize("settings", SETTINGS[:-1])  # every numeric kind
@pytest.mark.parametrize("new_key", [True, False], ids=["new-key", "existing-key"])
def test_a_block_with_one_bad_value_logs_nothing(settings: dict[str, Any], new_key: bool) -> None:
    logger = MetricsLogger()
    if not new_key:
        logger.log_value("k", 2.0, **settings)
    before = encode_msgpack(logger.get_state())
    for bad in ([1.0, "x"], [1.0, None], [1.0, [2.0, 3.0]], [1.0, {"a": 1}]):
        with pytest.raises(TypeError, match=r"cannot log .* under 'k': reduce=.* real numbers"):
            logger.log_values("k", bad, **settings)
        assert encode_msgpack(logger.get_state()) == before  # not even the good first value


def test_item_kinds_take_any_values_under_any_spelling_of_the_key() -> None:
    logger = MetricsLogger()
    logger.log_value(("a", "b"), "first", reduce=None, window=3)
    logger.log_values(("a", "b"), ["x", None])
    assert logger.peek("a") == {"b": ["first", "x", None]}
    logger.log_value("c", "seen", reduce="item")
    logger.log_values(("c",), [{"any": "object"}])  # the key's kind decides, not the default
    assert logger.peek("c") == {"any": "object"}


def test_any_iterable_is_a_block_and_a_single_value_is_refused() -> None:
    logger = MetricsLogger()
    logger.log_values("gen", (n for n in [1, 2, 3]), reduce="sum")
    logger.log_values("arr", np.array([1.0, 3.0]), window=5)
    assert logger.peek("gen") == 6
    assert logger.peek("arr") == 2.0
    for single in (5, 2.5, None, "abc", b"ab", {"a": 1}, np.float64(1.0), np.array(1.0)):
        with pytest.raises(TypeError, match=r"log_values takes a block of values to log under"):
            logger.log_values("one", single)
    assert logger.peek("one", default=None) is None
