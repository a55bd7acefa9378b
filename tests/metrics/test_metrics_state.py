"""get_state()/set_state(): checkpoints and shipping, through events.codec."""

from __future__ import annotations

import copy
import math
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from hookbus.events.codec import decode_json, decode_msgpack, encode_json, encode_msgpack
from hookbus.metrics import MetricsLogger

RoundTrip = Callable[[Any], Any]


@pytest.fixture(
    params=[
        lambda state: decode_msgpack(encode_msgpack(state)),
        lambda state: decode_json(encode_json(state)),
    ],
    ids=["msgpack", "json"],
)
def round_trip(request: pytest.FixtureRequest) -> RoundTrip:
    """Give an encode-then-decode through one of the codec's formats."""
    return request.param  # type: ignore[no-any-return]


def busy_logger() -> MetricsLogger:
    logger = MetricsLogger()
    for value in range(1, 8):
        logger.log_value("ema", float(value))
        logger.log_value(("w", "mean"), value, window=4)
        logger.log_value(("w", "max"), value, reduce="max", window=3)
        logger.log_value("low", value, reduce="min")
        logger.log_value("steps", value, reduce="lifetime_sum", with_throughput=True)
        logger.log_value("per_iter", value, reduce="sum", clear_on_reduce=True)
        logger.log_value("last", {"v": value}, reduce="item")
        logger.log_value("items", value, reduce=None, window=3)
        logger.log_value("all", np.arange(2) * value, reduce=None)
        logger.log_value("pct", value, reduce="percentiles", window=5)
        if value == 4:
            logger.reduce()
    return logger


def test_state_round_trips_exactly_through_msgpack() -> None:
    state = busy_logger().get_state()
    decoded = decode_msgpack(encode_msgpack(state))
    restored = MetricsLogger()
    restored.set_state(decoded)
    again = restored.get_state()
    assert encode_msgpack(again) == encode_msgpack(state)


def test_restored_logger_behaves_the_same(round_trip: RoundTrip) -> None:
    original = busy_logger()
    restored = MetricsLogger()
    restored.set_state(round_trip(original.get_state()))
    assert repr(restored.peek()) == repr(original.peek())
    assert restored.peek("steps", throughput=True) == original.peek("steps", throughput=True)
    for logger in (original, restored):
        logger.log_value(("w", "mean"), 100)
        logger.log_value("items", "new")
    assert repr(restored.peek()) == repr(original.peek())
    a, b = original.reduce(), restored.reduce()
    assert a["keys"] == [tuple(k) for k in b["keys"]]
    assert repr(a["data"]) == repr(b["data"])


def test_restored_runner_does_not_double_count() -> None:
    runner, algo = MetricsLogger(), MetricsLogger()
    runner.log_value("steps", 10, reduce="lifetime_sum")
    algo.aggregate([runner.reduce()])
    runner.log_value("steps", 5)  # not reduced yet when the checkpoint is taken
    restored = MetricsLogger()
    restored.set_state(decode_msgpack(encode_msgpack(runner.get_state())))
    algo.aggregate([restored.reduce()])
    assert algo.peek("steps") == 15
    assert restored.peek("steps") == 15


def test_set_state_replaces_everything() -> None:
    logger = MetricsLogger()
    logger.log_value("old", 1.0)
    other = MetricsLogger()
    other.log_value("new", 2.0, reduce="sum")
    logger.set_state(other.get_state())
    assert logger.peek() == {"new": 2.0}
    logger.log_value("new", 3.0)
    assert logger.peek("new") == 5.0


def test_bad_state() -> None:
    with pytest.raises(ValueError, match=r"version None"):
        MetricsLogger().set_state({"stats": []})


def _break(key: str, field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(state: dict[str, Any]) -> None:
        (record,) = [r for r in state["stats"] if r["key"] == [key]]
        record["state"][field] = value

    return change


def _append(record: Any) -> Callable[[dict[str, Any]], None]:
    return lambda state: state["stats"].append(record)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        # Records after the first: a loader that resets first would end half-loaded.
        (_break("low", "value", "high"), r"bad record 3 .*'value' must be a number or None"),
        (_break("ema", "value", "high"), r"'value' must be a number or None, got 'high'"),
        (_break("per_iter", "total", [1]), r"'total' must be a number or None"),
        (_break("steps", "delta", None), r"'delta' must be a number, got None"),
        (_break("steps", "throughput", True), r"'throughput' must be a number or None"),
        (_break("last", "value", "x"), r"'value' must be a list, got 'x'"),
        (_break("pct", "values", ["a"]), r"bad record"),
        (_append({"key": ["x"], "spec": "garbage", "state": {}}), "not a valid metrics spec"),
        (_append("garbage"), r"bad record"),
        (_append({"key": [], "spec": {}, "state": {}}), r"bad record.*metric key"),
        (lambda state: state.update(stats="garbage"), r"'stats' is a list, not str"),
    ],
)
def test_a_malformed_state_is_a_value_error_that_changes_nothing(
    change: Callable[[dict[str, Any]], None], match: str
) -> None:
    logger = busy_logger()
    before = encode_msgpack(logger.get_state())
    state = decode_msgpack(before)
    change(state)
    with pytest.raises(ValueError, match=match):
        logger.set_state(state)
    assert encode_msgpack(logger.get_state()) == before


def test_empty_and_nan_states(round_trip: RoundTrip) -> None:
    logger = MetricsLogger()
    logger.log_value("nan_only", math.nan, window=3)
    logger.log_value("ema", math.nan)
    restored = MetricsLogger()
    restored.set_state(round_trip(logger.get_state()))
    assert math.isnan(restored.peek("nan_only"))
    assert math.isnan(restored.peek("ema"))


def test_pickle_and_deepcopy() -> None:
    original = busy_logger()
    clones = [pickle.loads(pickle.dumps(original)), copy.deepcopy(original)]
    for clone in clones:
        assert type(clone) is MetricsLogger
        assert repr(clone.peek()) == repr(original.peek())
        assert repr(clone.reduce()["specs"]) == repr(busy_logger().reduce()["specs"])
    clones[0].log_value(("w", "mean"), 1000)
    assert clones[0].peek(("w", "mean")) != original.peek(("w", "mean"))
    stats = copy.deepcopy(next(original.items())[1])
    assert stats.settings["reduce"] == "ema"
