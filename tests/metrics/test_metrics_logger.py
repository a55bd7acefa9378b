"""MetricsLogger: logging, peeking, nested keys, timers, reset and delete."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from hookbus.metrics import MetricsLogger


@pytest.fixture
def logger() -> MetricsLogger:
    """Give an empty logger."""
    return MetricsLogger()


def test_log_value_documented_example(logger: MetricsLogger) -> None:
    logger.log_value("loss", 0.01, window=10)
    logger.log_value("loss", 0.02)  # settings are not repeated
    logger.log_value("loss", 0.03)
    assert logger.peek("loss") == pytest.approx(0.02)
    for _ in range(10):
        logger.log_value("loss", 0.05)
    assert logger.peek("loss") == pytest.approx(0.05)


def test_str_and_one_tuple_are_the_same_key(logger: MetricsLogger) -> None:
    logger.log_value("a", 1.0, window=2)
    logger.log_value(("a",), 3.0)
    assert logger.peek("a") == logger.peek(("a",)) == 2.0


def test_nested_keys_and_parent_peeks(logger: MetricsLogger) -> None:
    key = ("some", "nested", "key", "sequence")
    logger.log_value(key, 2.0, ema_coeff=0.01)
    logger.log_value(key, 3.0)
    expected = 0.99 * 2.0 + 0.01 * 3.0
    assert logger.peek(key) == pytest.approx(expected)
    assert logger.peek(("some", "nested")) == {"key": {"sequence": pytest.approx(expected)}}
    assert logger.peek("some") == {"nested": {"key": {"sequence": pytest.approx(expected)}}}
    assert ("some", "nested") in logger
    assert key in logger
    assert ("some", "other") not in logger


def test_peek_without_a_key_gives_the_whole_tree(logger: MetricsLogger) -> None:
    logger.log_value("a", 1, reduce="sum")
    logger.log_value(("b", "c"), np.float32(2.5), reduce="max")
    logger.log_value(("b", "d"), "x", reduce="item")
    tree = logger.peek()
    assert tree == {"a": 1, "b": {"c": 2.5, "d": "x"}}
    assert type(tree["b"]["c"]) is float


def test_peek_missing_key(logger: MetricsLogger) -> None:
    with pytest.raises(KeyError, match="nope"):
        logger.peek("nope")
    assert logger.peek("nope", default=None) is None
    assert logger.peek(("x", "y"), 7) == 7
    assert MetricsLogger().peek() == {}


def test_log_dict(logger: MetricsLogger) -> None:
    logger.log_dict({"a": 0.1, "b": -0.1}, window=10)
    logger.log_dict({"b": -0.2})
    logger.log_dict({"a": 0.2, "c": {"d": 5.0}})
    assert logger.peek() == {
        "a": pytest.approx(0.15),
        "b": pytest.approx(-0.15),
        "c": {"d": 5.0},
    }


def test_log_dict_under_a_key(logger: MetricsLogger) -> None:
    logger.log_dict({"x": 1, "y": {"z": 2}}, key=("learners", "default_policy"), reduce="sum")
    assert logger.peek(("learners", "default_policy", "y", "z")) == 2


def test_item_series_example(logger: MetricsLogger) -> None:
    for value in (5.0, 6.0, 7.0):
        logger.log_value("some_items", value, reduce=None)
    assert logger.peek("some_items") == [5.0, 6.0, 7.0]
    logger.reduce()
    assert logger.peek("some_items") == []


def test_per_iteration_and_lifetime_counts(logger: MetricsLogger) -> None:
    for _ in range(3):
        logger.log_value("num_env_steps_sampled", 100, reduce="sum", clear_on_reduce=True)
        logger.log_value("num_env_steps_sampled_lifetime", 100, reduce="lifetime_sum")
        assert logger.peek("num_env_steps_sampled") == 100
        logger.reduce()
    assert logger.peek("num_env_steps_sampled") == 0
    assert logger.peek("num_env_steps_sampled_lifetime") == 300


def test_log_time(logger: MetricsLogger, clock: Any) -> None:
    with logger.log_time(("timers", "sample"), reduce="mean", window=2):
        clock.advance(1.5)
    with logger.log_time(("timers", "sample")):
        clock.advance(0.5)
    assert logger.peek(("timers", "sample")) == 1.0

    def slow_failure() -> None:
        with logger.log_time(("timers", "sample")):
            clock.advance(3.0)
            raise RuntimeError

    with pytest.raises(RuntimeError):
        slow_failure()
    assert logger.peek(("timers", "sample")) == 1.75  # the failed block still took 3 s


def test_log_time_defaults_to_an_ema(logger: MetricsLogger, clock: Any) -> None:
    with logger.log_time("t"):
        clock.advance(1.0)
    with logger.log_time("t"):
        clock.advance(2.0)
    assert logger.peek("t") == pytest.approx(1.01)


def test_throughput_peek(clock: Any) -> None:
    logger = MetricsLogger()
    clock.advance(2.0)  # time before a key's first log does not count (RLlib)
    logger.log_value("steps", 10, reduce="lifetime_sum", with_throughput=True)
    assert math.isnan(logger.peek("steps", throughput=True))
    clock.advance(2.0)
    logger.log_value("steps", 10)
    assert logger.peek("steps", throughput=True) == 5.0
    assert logger.peek(throughput=True) == {"steps_throughput": 5.0}  # RLlib's names
    logger.log_value("loss", 1.0)
    with pytest.raises(ValueError, match="does not track a throughput"):
        logger.peek("loss", throughput=True)


def test_bad_values(logger: MetricsLogger) -> None:
    with pytest.raises(TypeError, match=r"cannot log 'abc' under 'x': reduce='ema' takes"):
        logger.log_value("x", "abc")
    assert "x" not in logger  # a refused first value creates no key
    with pytest.raises(TypeError, match=r"cannot log \[1, 2\] under 'w'"):
        logger.log_value("w", [1, 2], window=3)
    logger.log_value("w", 1.0, window=3)
    with pytest.raises(TypeError, match=r"cannot log 'abc' under 'w': reduce='mean'"):
        logger.log_value("w", "abc")
    logger.log_value("s", 1, reduce="sum")
    with pytest.raises(TypeError, match="under 's'"):
        logger.log_value("s", "abc")
    logger.log_value("zero_d", np.array(2.0), window=2)
    assert logger.peek("zero_d") == 2.0


def test_bad_keys(logger: MetricsLogger) -> None:
    for key in (3, (), ("a", 1), None):
        with pytest.raises(TypeError, match="a metric key is a str or a non-empty tuple"):
            logger.log_value(key, 1.0)  # type: ignore[arg-type]


def test_a_leaf_cannot_also_be_a_parent(logger: MetricsLogger) -> None:
    logger.log_value(("a", "b"), 1.0)
    with pytest.raises(ValueError, match=r"cannot log under \('a',\): it already has nested"):
        logger.log_value("a", 1.0)
    with pytest.raises(ValueError, match=r"\('a', 'b'\) is a metric"):
        logger.log_value(("a", "b", "c"), 1.0)


def test_reset(logger: MetricsLogger) -> None:
    logger.log_value("a", 1.0)
    logger.reset()
    assert logger.peek() == {}
    assert logger.reduce() == {"version": 1, "keys": [], "specs": [], "data": []}
    logger.log_value("a", 5.0, reduce="sum")  # a new key, new settings
    assert logger.peek("a") == 5.0


def test_delete(logger: MetricsLogger) -> None:
    logger.log_value(("a", "b"), 1.0)
    logger.log_value(("a", "c"), 2.0)
    logger.log_value("d", 3.0)
    logger.delete("a", "b")
    assert logger.peek("a") == {"c": 2.0}
    logger.delete(("a",))
    assert logger.peek() == {"d": 3.0}
    with pytest.raises(KeyError):
        logger.delete("a")
    logger.delete("a", key_error=False)
    logger.log_value("a", 4.0)  # the name is free again
    assert logger.peek("a") == 4.0
    logger.delete("d")
    logger.log_value("d", 1, reduce="sum")
    assert logger.peek("d") == 1


def test_nan_is_ignored_through_the_logger(logger: MetricsLogger) -> None:
    logger.log_value("r", math.nan, window=3)
    assert math.isnan(logger.peek("r"))
    logger.log_value("r", 2.0)
    logger.log_value("r", math.nan)
    assert logger.peek("r") == 2.0


def test_items_lists_paths_and_stats(logger: MetricsLogger) -> None:
    logger.log_value(("a", "b"), 1.0)
    logger.log_value("c", 1.0)
    assert [path for path, _ in logger.items()] == [("a", "b"), ("c",)]
    assert repr(logger) == "<MetricsLogger with 2 keys>"


def test_numpy_bools_count_as_zero_and_one() -> None:
    # RLlib's self-play callback logs `rewards[agent][-1] == 1.0`, a numpy bool.
    logger = MetricsLogger()
    for won in np.array([1.0, 1.0, -1.0, 1.0]) == 1.0:
        logger.log_value("win_rate", won, reduce="mean", window=100)
        logger.log_value("wins", won, reduce="sum")
    assert logger.peek("win_rate") == 0.75
    assert logger.peek("wins") == 3
