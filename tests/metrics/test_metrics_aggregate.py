"""Merging EnvRunners' snapshots into the Algorithm's logger."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from hookbus.events.codec import decode_json, decode_msgpack, encode_json, encode_msgpack
from hookbus.metrics import MetricsLogger

Ship = Callable[[dict[str, Any]], dict[str, Any]]


def in_process(snapshot: dict[str, Any]) -> dict[str, Any]:
    return snapshot


def via_msgpack(snapshot: dict[str, Any]) -> dict[str, Any]:
    decoded: dict[str, Any] = decode_msgpack(encode_msgpack(snapshot))
    return decoded


def via_json(snapshot: dict[str, Any]) -> dict[str, Any]:
    decoded: dict[str, Any] = decode_json(encode_json(snapshot))
    return decoded


@pytest.fixture(params=[in_process, via_msgpack, via_json])
def ship(request: pytest.FixtureRequest) -> Ship:
    """Give a way to move a snapshot: in process, or encoded and decoded (a worker process)."""
    return request.param  # type: ignore[no-any-return]


def runner(*logs: tuple[Any, ...], **settings: Any) -> MetricsLogger:
    """Return a logger with ``(key, value)`` pairs logged with ``settings``."""
    logger = MetricsLogger()
    for key, value in logs:
        logger.log_value(key, value, **settings)
    return logger


def series(key: str, *values: float) -> list[tuple[str, float]]:
    return [(key, value) for value in values]


# --- RLlib's documented merges --------------------------------------------------------------


def test_two_learners_loss(ship: Ship) -> None:
    main = MetricsLogger()
    snaps = [runner(("loss", v), window=1).reduce() for v in (0.1, 0.2)]
    main.aggregate([ship(s) for s in snaps], key="learners")
    assert main.peek(("learners", "loss")) == pytest.approx(0.15)


def test_two_env_runners_windowed_mean(ship: Ship) -> None:
    main = MetricsLogger()
    one = runner(*series("mean_ret", 100, 200, 300, 400), window=3)
    two = runner(*series("mean_ret", 150, 250, 350, 450), window=3)
    main.aggregate([ship(one.reduce()), ship(two.reduce())], key="env_runners")
    assert main.peek(("env_runners", "mean_ret")) == pytest.approx((325 + 425 + 425) / 3)


def test_lifetime_sum_over_two_components(ship: Ship) -> None:
    main = MetricsLogger()
    one = runner(*series("some_stat", 50, 25), reduce="sum")
    two = runner(("some_stat", 75), reduce="sum")
    main.aggregate([ship(one.reduce()), ship(two.reduce())])
    assert main.peek("some_stat") == 150


def test_windowed_sum_over_two_components(ship: Ship) -> None:
    main = MetricsLogger()
    one = runner(*series("some_stat", 50, 25, 10, 5), reduce="sum", window=3)
    two = runner(*series("some_stat", 75, 100), reduce="sum", window=3)
    main.aggregate([ship(one.reduce()), ship(two.reduce())])
    assert main.peek("some_stat") == 115


def test_counts_cleared_on_reduce(ship: Ship) -> None:
    main = MetricsLogger()
    snaps = [runner(("count", n), reduce="sum", clear_on_reduce=True).reduce() for n in (2, 3)]
    main.aggregate([ship(s) for s in snaps])
    assert main.peek("count") == 5


# --- iterations: no double counting, windows that slide -------------------------------------


def test_lifetime_sums_never_double_count(ship: Ship) -> None:
    runners = [MetricsLogger() for _ in range(3)]
    algo = MetricsLogger()
    for iteration in range(1, 6):
        for index, r in enumerate(runners):
            r.log_value("steps_lifetime", 10 * (index + 1), reduce="lifetime_sum")
            r.log_value("steps_total", 1, reduce="sum")  # a sum never cleared
            r.log_value("steps", 10, reduce="sum", clear_on_reduce=True)
        algo.aggregate([ship(r.reduce()) for r in runners], key="env_runners")
        assert algo.peek(("env_runners", "steps_lifetime")) == 60 * iteration
        assert algo.peek(("env_runners", "steps_total")) == 3 * iteration
        assert algo.peek(("env_runners", "steps")) == 30  # per iteration: cleared below
        algo.reduce()
    assert runners[2].peek("steps_lifetime") == 150  # runners keep their own totals


def test_root_window_holds_the_newest_values_of_all_runners(ship: Ship) -> None:
    one, two, algo = MetricsLogger(), MetricsLogger(), MetricsLogger()
    one.log_value("ret", 1.0, window=4)
    two.log_value("ret", 3.0, window=4)
    algo.aggregate([ship(one.reduce()), ship(two.reduce())])
    assert algo.peek("ret") == 2.0  # the root window: [2, 2] (same-age values averaged)
    # Next iteration only runner one finishes episodes: they push out the oldest values.
    for value in (10.0, 20.0, 30.0):
        one.log_value("ret", value)
    algo.aggregate([ship(one.reduce()), ship(two.reduce())])
    assert algo.peek("ret") == pytest.approx((2.0 + 10 + 20 + 30) / 4)
    # An iteration without any episode: the window keeps its values (never NaN).
    algo.aggregate([ship(one.reduce()), ship(two.reduce())])
    assert algo.peek("ret") == pytest.approx((2.0 + 10 + 20 + 30) / 4)


def test_windows_are_not_reshipped(ship: Ship) -> None:
    one, algo = MetricsLogger(), MetricsLogger()
    for value in (1.0, 2.0):
        one.log_value("x", value, reduce="mean", window=10)
    algo.aggregate([ship(one.reduce())])
    one.log_value("x", 3.0)
    algo.aggregate([ship(one.reduce())])
    assert algo.peek("x") == 2.0  # 1, 2, 3: the first two were not merged twice


def test_ema_min_max_item_series_percentiles(ship: Ship) -> None:
    one, two, algo = MetricsLogger(), MetricsLogger(), MetricsLogger()
    for logger, values in ((one, (1.0, 5.0)), (two, (3.0, -1.0))):
        for value in values:
            logger.log_value("ema", value, ema_coeff=0.5)
            logger.log_value("low", value, reduce="min")
            logger.log_value("high", value, reduce="max", window=2)
            logger.log_value("last", value, reduce="item")
            logger.log_value("all", value, reduce=None)
            logger.log_value("pct", value, reduce="percentiles", window=10, percentiles=[0, 100])
    algo.aggregate([ship(one.reduce()), ship(two.reduce())])
    assert algo.peek() == {
        "ema": pytest.approx((3.0 + 1.0) / 2),
        "low": -1.0,
        "high": 5.0,
        "last": -1.0,
        "all": [1.0, 5.0, 3.0, -1.0],
        "pct": {0: -1.0, 100: 5.0},
    }


def test_the_root_takes_the_runners_settings(ship: Ship) -> None:
    one, algo = MetricsLogger(), MetricsLogger()
    one.log_value("low", 5, reduce="min", clear_on_reduce=True)
    algo.aggregate([ship(one.reduce())])
    one.log_value("low", 7)
    algo.aggregate([ship(one.reduce())])
    assert algo.peek("low") == 5  # the minimum since the root's last reduce()
    algo.reduce()  # clears the root's key too: clear_on_reduce came with the snapshot
    one.log_value("low", 9)
    algo.aggregate([ship(one.reduce())])
    assert algo.peek("low") == 9


def test_runners_with_different_keys(ship: Ship) -> None:
    one, two, algo = MetricsLogger(), MetricsLogger(), MetricsLogger()
    one.log_value("a", 1, reduce="sum")
    two.log_value("b", 2, reduce="sum")
    two.log_value("a", 3, reduce="sum")
    algo.aggregate([ship(one.reduce()), ship(two.reduce())], key=("x", "y"))
    assert algo.peek("x") == {"y": {"a": 4, "b": 2}}


def test_merged_ints_stay_ints(ship: Ship) -> None:
    one, algo = MetricsLogger(), MetricsLogger()
    for value in (3, 9, 4):
        one.log_value("episode_len_max", value, reduce="max", window=100)
    algo.aggregate([ship(one.reduce())])
    assert algo.peek("episode_len_max") == 9
    assert type(algo.peek("episode_len_max")) is int


def test_throughput_at_the_root(clock: Any, ship: Ship) -> None:
    one, algo = MetricsLogger(), MetricsLogger()
    for _ in range(3):
        clock.advance(2.0)
        one.log_value("steps", 100, reduce="lifetime_sum", with_throughput=True)
        algo.aggregate([ship(one.reduce())])
    assert algo.peek("steps") == 300
    assert algo.peek("steps", throughput=True) == pytest.approx(50.0)


# --- refusals -------------------------------------------------------------------------------


def test_different_settings_for_one_key_are_refused() -> None:
    one = runner(("x", 1.0), window=3)
    two = runner(("x", 1.0), reduce="sum")
    with pytest.raises(ValueError, match=r"cannot merge a 'sum' part into a 'mean\[window\]'"):
        MetricsLogger().aggregate([one.reduce(), two.reduce()])


def test_not_a_snapshot() -> None:
    with pytest.raises(ValueError, match="not a hookbus metrics snapshot"):
        MetricsLogger().aggregate([{"loss": 0.1}])
    with pytest.raises(ValueError, match="not a hookbus metrics snapshot"):
        MetricsLogger().aggregate([[1, 2]])  # type: ignore[list-item]
    bad = runner(("x", 1.0)).reduce()
    bad["data"] = []
    with pytest.raises(ValueError, match="differ in length"):
        MetricsLogger().aggregate([bad])
    bad = runner(("x", 1.0)).reduce()
    bad["specs"] = [{"reduce": "median"}]
    with pytest.raises(ValueError, match="not a valid metrics spec"):
        MetricsLogger().aggregate([bad])


def test_nothing_to_aggregate() -> None:
    algo = MetricsLogger()
    algo.aggregate([])
    algo.aggregate([MetricsLogger().reduce()])
    assert algo.peek() == {}


def test_snapshot_is_plain_data() -> None:
    logger = runner(("a", 1.0), window=3)
    logger.log_value(("b", "c"), 2, reduce="lifetime_sum")
    snapshot = logger.reduce()
    assert snapshot["keys"] == [("a",), ("b", "c")]
    assert snapshot["data"] == [[1.0], 2]
    assert snapshot["specs"][0]["reduce"] == "mean"
    assert runner(("e", math.nan)).reduce()["data"] == [None]  # "no value", JSON-safe
