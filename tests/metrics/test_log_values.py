"""``MetricsLogger.log_values``: a block of values logs exactly as one ``log_value`` each."""

from __future__ import annotations

import math
from typing import Any

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
