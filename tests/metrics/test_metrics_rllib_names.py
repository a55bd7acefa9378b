"""RLlib's other MetricsLogger names: reduce(key=...), set_value, peek_results, compile and
the deprecated merge_and_log_n_dicts, with RLlib's own assertions where RLlib has them.

Ported from ray-project/ray (read in the search tool's stored copies):

- ``rllib/utils/metrics/metrics_logger.py``, the version with ``merge_and_log_n_dicts`` as
  the merging method and ``reduce(key=None, *, return_stats_obj=True)`` (RLlib 2.40's API):
  the testcode of ``log_value``, ``merge_and_log_n_dicts``, ``reduce`` and ``reset``;
- ``rllib/utils/metrics/tests/test_metrics_logger.py``, the version that still calls
  ``merge_and_log_n_dicts`` (``test_merge_and_log_n_dicts``,
  ``test_merge_and_log_n_dicts_with_throughput``, ``test_reduction_method_preservation``,
  ``test_reset_and_delete``), and the newest, which calls ``aggregate`` (``test_aggregate``).

Kept: every assertion on a value these methods produce. Not kept, and why:

- ``len(logger.stats["loss"].values)`` and ``main_logger.stats[...].values``: RLlib's
  internals (its ``stats`` attribute and value lists); hookbus checks the same windows
  through ``peek()``.
- ``check(logger.reduce(), {})`` after ``reset()``: hookbus's default ``reduce()`` returns a
  snapshot (SPEC); the port checks the snapshot is empty and ``reduce(compile=True) == {}``.
- ``test_merge_and_log_n_dicts``' second case, "mean of the means" 4.67 over runners with
  3, 2 and 4 values in a window of 5: that RLlib version averaged the runners' means;
  hookbus follows RLlib's documented per-age merge (docs/metrics.md, Merging), which gives
  5.27 there. Its first case expects 0.35 in that version and 0.3 in the newest
  ``test_aggregate`` (same setup); hookbus gives the newest's 0.3.
- ``test_reduction_method_preservation``'s mean case (2.01, the mean of the root's EMA and the
  incoming one): hookbus's merged EMA is the average of the incoming EMAs (3.01), the
  Algorithm's own value being replaced, as docs/metrics.md's merge table says.
- ``logger.throughputs(...)``: a method of that one RLlib version, later
  ``peek(..., throughput=True)``, which is what the port calls.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from hookbus.events.codec import decode_json, decode_msgpack, encode_json, encode_msgpack
from hookbus.metrics import MetricsLogger, Stats, results

Ship = Callable[[dict[str, Any]], dict[str, Any]]
DEPRECATED = (
    r"`merge_and_log_n_dicts` has been deprecated\. Use `aggregate` instead\. "
    r"This will raise an error in the future!"
)


def via_msgpack(snapshot: dict[str, Any]) -> dict[str, Any]:
    decoded: dict[str, Any] = decode_msgpack(encode_msgpack(snapshot))
    return decoded


def via_json(snapshot: dict[str, Any]) -> dict[str, Any]:
    decoded: dict[str, Any] = decode_json(encode_json(snapshot))
    return decoded


@pytest.fixture(params=[lambda snapshot: snapshot, via_msgpack, via_json])
def ship(request: pytest.FixtureRequest) -> Ship:
    """Give a way to move a snapshot: in process, or encoded and decoded (a worker process)."""
    return request.param  # type: ignore[no-any-return]


def merge_old_way(logger: MetricsLogger, snapshots: list[Any], **kwargs: Any) -> None:
    with pytest.warns(DeprecationWarning, match=DEPRECATED):
        logger.merge_and_log_n_dicts(snapshots, **kwargs)


# --- reduce(): values, and RLlib's key= ---------------------------------------------------------


def test_log_value_testcode_reduce_without_stats_objects() -> None:
    # RLlib 2.40, MetricsLogger.log_value's testcode.
    logger = MetricsLogger()
    logger.log_value("loss", 0.01, window=10)
    logger.log_value("loss", 0.02)
    logger.log_value("loss", 0.03)
    assert logger.peek("loss") == pytest.approx(0.02)
    for _ in range(10):
        logger.log_value("loss", 0.05)
    assert logger.peek("loss") == pytest.approx(0.05)
    assert logger.reduce(return_stats_obj=False) == {"loss": pytest.approx(0.05)}
    logger.log_value(("some", "nested", "key"), -1.0)
    assert logger.peek(("some", "nested", "key")) == -1.0
    logger.log_value("some_items", 5.0, reduce=None)
    logger.log_value("some_items", 6.0)
    logger.log_value("some_items", 7.0)
    assert logger.peek("some_items") == [5.0, 6.0, 7.0]
    logger.log_value("some_more_items", -5.0, reduce=None, clear_on_reduce=True)
    logger.log_value("some_more_items", -6.0)
    logger.log_value("some_more_items", -7.0)
    assert logger.peek("some_more_items") == [-5.0, -6.0, -7.0]
    assert logger.reduce(return_stats_obj=False) == {
        "loss": pytest.approx(0.05),
        "some": {"nested": {"key": -1.0}},
        "some_items": [5.0, 6.0, 7.0],
        "some_more_items": [-5.0, -6.0, -7.0],
    }
    assert logger.peek("some_more_items") == []
    assert logger.peek("some_items") == []  # a list without a window is always cleared


def test_reduce_testcode_values_and_a_merge_of_two_components() -> None:
    # RLlib 2.40, MetricsLogger.reduce's testcode.
    logger = MetricsLogger()
    logger.log_value("a", 2.0)
    logger.log_value("a", 3.0)
    assert logger.reduce(return_stats_obj=False) == {"a": pytest.approx(0.99 * 2.0 + 0.01 * 3.0)}
    logger = MetricsLogger()
    logger.log_value("a", 2.0, window=2)
    logger.log_value("a", 3.0)
    logger.log_value("a", 4.0)
    assert logger.reduce(return_stats_obj=False) == {"a": 3.5}
    comp1 = MetricsLogger()
    comp1.log_value("a", 1.0, window=10)
    comp1.log_value("a", 2.0)
    comp2 = MetricsLogger()
    comp2.log_value("a", 3.0, window=10)
    comp2.log_value("a", 4.0)
    downstream = MetricsLogger()
    merge_old_way(downstream, [comp1.reduce(), comp2.reduce()])
    assert downstream.reduce(return_stats_obj=False) == {"a": 2.5}


def test_compile_true_is_the_later_spelling_of_return_stats_obj_false() -> None:
    logger = MetricsLogger()
    logger.log_value("n", 3, reduce="sum", clear_on_reduce=True)
    logger.log_value(("x", "y"), 1.0, window=2)
    assert logger.reduce(compile=True) == {"n": 3, "x": {"y": 1.0}}
    assert logger.peek("n") == 0  # the period closed: the per-iteration count cleared
    assert logger.reduce(return_stats_obj=False, compile=True) == {"n": 0, "x": {"y": 1.0}}


def test_reduce_values_are_the_peeks_before_the_period_closes() -> None:
    logger = MetricsLogger()
    logger.log_value("steps", 5, reduce="sum", clear_on_reduce=True)
    logger.log_value("last", "a", reduce="item", clear_on_reduce=True)
    before = logger.peek()
    assert logger.reduce(compile=True) == before == {"steps": 5, "last": "a"}
    assert logger.peek() == {"steps": 0, "last": None}


def test_reduce_key_reduces_only_that_subtree(ship: Ship) -> None:
    runner = MetricsLogger()
    runner.log_value(("eval", "n"), 2, reduce="sum", clear_on_reduce=True)
    runner.log_value(("eval", "ret"), 10.0, window=5)
    runner.log_value("n", 7, reduce="sum", clear_on_reduce=True)
    snapshot = runner.reduce(key="eval")
    assert [tuple(k) for k in snapshot["keys"]] == [("n",), ("ret",)]  # relative to the key
    assert runner.peek() == {"eval": {"n": 0, "ret": 10.0}, "n": 7}  # "n" outside: untouched
    algo = MetricsLogger()
    algo.aggregate([ship(snapshot)], key=("evaluation", "env_runners"))
    assert algo.peek("evaluation") == {"env_runners": {"n": 2, "ret": 10.0}}
    assert runner.reduce()["keys"] == [("eval", "n"), ("eval", "ret"), ("n",)]


def test_reduce_key_of_a_leaf_or_a_missing_key() -> None:
    logger = MetricsLogger()
    logger.log_value(("a", "b"), 3, reduce="sum", clear_on_reduce=True)
    assert logger.reduce(("a", "b"), compile=True) == 3  # a leaf: its value, then cleared
    assert logger.peek(("a", "b")) == 0
    logger.log_value(("a", "b"), 4)
    snapshot = logger.reduce(("a", "b"))
    assert (snapshot["keys"], snapshot["data"]) == ([("b",)], [4])  # under its last name
    assert logger.reduce("missing", compile=True) == {}  # RLlib: an empty structure
    assert logger.reduce("missing") == {"version": 1, "keys": [], "specs": [], "data": []}


def test_reset_testcode_and_test_reset_and_delete() -> None:
    # RLlib 2.40 MetricsLogger.reset's testcode; test_reset_and_delete.
    logger = MetricsLogger()
    logger.log_value("a", 1.0)
    assert logger.peek("a") == 1.0
    logger.log_value("test1", 0.1)
    logger.log_value("test2", 0.2)
    logger.delete("test1")
    with pytest.raises(KeyError):
        logger.peek("test1")
    logger.reset()
    assert logger.reduce(compile=True) == {}
    assert logger.reduce()["keys"] == []


# --- merge_and_log_n_dicts: RLlib's deprecated name of aggregate() -----------------------------


def test_merge_and_log_n_dicts_warns_as_rllib_and_merges_as_aggregate(ship: Ship) -> None:
    # RLlib (newest): @Deprecated(new="aggregate", error=False) on merge_and_log_n_dicts.
    learners = []
    for loss in (0.1, 0.2):
        learner = MetricsLogger()
        learner.log_value("loss", loss, window=1)
        learners.append(ship(learner.reduce()))
    main = MetricsLogger()
    merge_old_way(main, learners, key="learners")
    assert main.peek(("learners", "loss")) == pytest.approx(0.15)


def test_merge_and_log_n_dicts_testcode(ship: Ship) -> None:
    # RLlib 2.40, MetricsLogger.merge_and_log_n_dicts's testcode (the learners' case above).
    runners = []
    for returns in ([100.0, 200.0, 300.0, 400.0], [150.0, 250.0, 350.0, 450.0]):
        runner = MetricsLogger()
        for ret in returns:
            runner.log_value("mean_ret", ret, window=3)
        runners.append(ship(runner.reduce()))
    main = MetricsLogger()
    merge_old_way(main, runners, key="env_runners")
    assert main.peek(("env_runners", "mean_ret")) == pytest.approx((325 + 425 + 425) / 3)

    lifetime = [MetricsLogger(), MetricsLogger()]
    lifetime[0].log_value("some_stat", 50, reduce="sum", window=None)
    lifetime[0].log_value("some_stat", 25, reduce="sum", window=None)
    lifetime[1].log_value("some_stat", 75, reduce="sum", window=None)
    main = MetricsLogger()
    merge_old_way(main, [ship(one.reduce()) for one in lifetime])
    assert main.peek("some_stat") == 150

    windowed = [MetricsLogger(), MetricsLogger()]
    for value in (50, 25, 10, 5):
        windowed[0].log_value("some_stat", value, reduce="sum", window=3)
    for value in (75, 100):
        windowed[1].log_value("some_stat", value, reduce="sum", window=3)
    main = MetricsLogger()
    merge_old_way(main, [ship(one.reduce()) for one in windowed])
    assert main.peek("some_stat") == 115  # the last 3 of [75, 10, 100, 5]


def test_merge_of_two_windows_into_a_logged_window() -> None:
    # test_merge_and_log_n_dicts' first case (0.35 there), the newest test_aggregate (0.3).
    logger1, logger2, logger = MetricsLogger(), MetricsLogger(), MetricsLogger()
    for one, values in ((logger1, (0.1, 0.2)), (logger2, (0.3, 0.4)), (logger, (0.5, 0.6))):
        for value in values:
            one.log_value("loss", value, window=2)
    merge_old_way(logger, [logger1.reduce(), logger2.reduce()])
    assert logger.peek("loss") == pytest.approx(0.3)


def test_merge_and_log_n_dicts_with_throughput(clock: Any) -> None:
    # RLlib test_merge_and_log_n_dicts_with_throughput.
    logger = MetricsLogger()
    for key in ("count", ("nested", "count")):
        loggers = [MetricsLogger(), MetricsLogger()]
        for one, values in zip(loggers, ((1, 2), (3, 4)), strict=True):
            for value in values:
                one.log_value(
                    key, value, reduce="sum", with_throughput=True, throughput_ema_coeff=0.1
                )
        merge_old_way(logger, [one.reduce() for one in loggers])
        assert logger.peek(key) == 10
        assert math.isnan(logger.peek(key, throughput=True))  # the first merge starts a clock


def test_reduction_method_preservation() -> None:
    # RLlib test_reduction_method_preservation, its sum case (see the header for the mean).
    logger = MetricsLogger()
    logger.log_value("sum_metric", 10, reduce="sum")
    logger.log_value("sum_metric", 20)
    assert logger.peek("sum_metric") == 30
    logger2 = MetricsLogger()
    logger2.log_value("sum_metric", 40, reduce="sum")
    logger2.log_value("sum_metric", 50)
    merge_old_way(logger, [logger2.reduce()])
    assert logger.peek("sum_metric") == 120
    logger.log_value("sum_metric", 100)
    assert logger.peek("sum_metric") == 220


def test_merge_and_log_n_dicts_takes_rllib_240s_keywords_without_using_them() -> None:
    runner = MetricsLogger()
    runner.log_value("ret", 1.0, window=5)
    main = MetricsLogger()
    merge_old_way(main, [runner.reduce()], key="r", reduce="max", window=2, clear_on_reduce=True)
    assert next(main.items())[1].settings["reduce"] == "mean"


def test_the_warning_points_at_the_caller() -> None:
    main = MetricsLogger()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        main.merge_and_log_n_dicts([])
    assert [w.filename for w in caught] == [__file__]


# --- set_value ----------------------------------------------------------------------------------


def test_set_value_on_a_new_key_logs_it_with_the_settings() -> None:
    # RLlib's self-play example resets its win rates this way before any were logged.
    logger = MetricsLogger()
    logger.set_value("win_rate_0", 0, window=1000)
    assert logger.peek("win_rate_0") == 0
    assert next(logger.items())[1].settings["window"] == 1000


@pytest.mark.parametrize(
    ("settings", "logged", "expected"),
    [
        ({"window": 3}, [1.0, 2.0, 3.0], 9.0),
        ({}, [1.0, 2.0], 9.0),  # an EMA
        ({"reduce": "min"}, [1.0, 2.0], 9.0),
        ({"reduce": "max", "window": 2}, [10.0, 20.0], 9.0),
        ({"reduce": "sum", "window": 2}, [10, 20], 9),
        ({"reduce": "sum"}, [10, 20], 9),
        ({"reduce": "lifetime_sum", "with_throughput": True}, [10, 20], 9),
        ({"reduce": "item"}, ["a", "b"], 9),
        ({"reduce": None}, ["a", "b"], [9]),
        ({"reduce": None, "window": 5}, ["a", "b"], [9]),
    ],
)
def test_set_value_makes_the_value_the_only_one_held(
    settings: dict[str, Any], logged: list[Any], expected: Any
) -> None:
    logger = MetricsLogger()
    for value in logged:
        logger.log_value("k", value, **settings)
    stats = next(logger.items())[1]
    before = stats.settings
    logger.set_value("k", 9, reduce="max", window=7)  # the key keeps its own settings
    assert logger.peek("k") == expected
    assert stats.settings == before
    assert len(stats) == 1  # RLlib 2.40: the values list becomes [value]


def test_set_value_of_a_percentiles_window() -> None:
    logger = MetricsLogger()
    for value in range(10):
        logger.log_value("lat", value, reduce="percentiles", window=10, percentiles=[50])
    logger.set_value("lat", 4.0)
    assert logger.peek("lat") == {50: 4.0}


def test_a_set_sum_hands_the_jump_to_the_aggregating_logger(ship: Ship) -> None:
    # The Algorithm's total follows the runner's: RLlib 2.40 merged a lifetime sum as the
    # new value minus the previously reduced one, which is the same jump.
    runner, algo = MetricsLogger(), MetricsLogger()
    runner.log_value("episodes", 5, reduce="lifetime_sum")
    algo.aggregate([ship(runner.reduce())])
    runner.set_value("episodes", 2)
    algo.aggregate([ship(runner.reduce())])
    assert (runner.peek("episodes"), algo.peek("episodes")) == (2, 2)
    runner.log_value("episodes", 1)
    algo.aggregate([ship(runner.reduce())])
    assert algo.peek("episodes") == 3


def test_a_set_window_value_is_new_for_the_next_snapshot() -> None:
    runner = MetricsLogger()
    for value in (1.0, 2.0, 3.0):
        runner.log_value("ret", value, window=3)
    runner.reduce()
    runner.set_value("ret", 7.0)
    assert runner.reduce()["data"] == [[7.0]]


def test_set_value_refuses_what_the_key_cannot_hold() -> None:
    logger = MetricsLogger()
    logger.log_value("loss", 1.0, window=2)
    with pytest.raises(TypeError, match=r"cannot log 'x' under 'loss': reduce='mean'"):
        logger.set_value("loss", "x")
    assert logger.peek("loss") == 1.0  # unchanged
    with pytest.raises(TypeError, match="cannot log"):
        logger.set_value("loss", 10**400)  # no float64 holds it
    assert logger.peek("loss") == 1.0  # unchanged
    logger.set_value("loss", math.nan)  # a NaN empties a numeric key, as logging ignores it
    assert math.isnan(logger.peek("loss"))


def test_set_value_under_any_spelling_of_the_key() -> None:
    logger = MetricsLogger()
    logger.log_value(("a", "b"), 1.0, window=3)
    logger.set_value(["a", "b"], 2.0)  # type: ignore[arg-type]  # RLlib takes lists too
    assert logger.peek(("a", "b")) == 2.0


# --- peek_results and compile ---------------------------------------------------------------------


def test_peek_results_of_a_snapshot_gives_the_values_it_carries(ship: Ship) -> None:
    runner = MetricsLogger()
    runner.log_value("steps", 10, reduce="lifetime_sum")
    runner.log_value(("eval", "ret"), 1.0, window=10)
    runner.log_value(("eval", "ret"), 3.0)
    runner.log_value("frames", np.ones((2, 2), np.uint8), reduce=None)
    first = runner.reduce()
    runner.log_value("steps", 5)
    second = runner.reduce()
    values = MetricsLogger.peek_results(ship(first))
    assert values["steps"] == 10
    assert values["eval"] == {"ret": 2.0}
    assert values["frames"][0].shape == (2, 2)
    assert values["frames"][0].dtype == np.uint8
    # What is new: the sum's increment, no window value (nothing was logged).
    assert runner.peek_results(ship(second)) == {
        "steps": 5,
        "eval": {"ret": pytest.approx(math.nan, nan_ok=True)},
        "frames": [],
    }


def test_peek_results_of_stats_trees_and_other_leaves() -> None:
    ema = Stats("ema", ema_coeff=0.5)
    ema.push(1.0)
    ema.push(3.0)
    tree = {"a": ema, "b": [ema, 5], "c": (ema, "x"), "d": None}
    assert MetricsLogger.peek_results(tree) == {"a": 2.0, "b": [2.0, 5], "c": (2.0, "x"), "d": None}
    assert MetricsLogger.peek_results(tree, compile=False)["a"] == [2.0]
    assert MetricsLogger.peek_results(7) == 7


def test_uncompiled_peeks_are_lists_of_values() -> None:
    # RLlib's peek(compile=False): "a list of one or more values".
    logger = MetricsLogger()
    logger.log_value("loss", 1.0, window=2)
    logger.log_value(("n", "items"), "a", reduce=None)
    logger.log_value(("n", "items"), "b")
    assert logger.peek("loss", compile=False) == [1.0]
    assert logger.peek(("n", "items"), compile=False) == ["a", "b"]
    assert logger.peek(compile=False) == {"loss": [1.0], "n": {"items": ["a", "b"]}}
    assert logger.peek("n", compile=False) == {"items": ["a", "b"]}
    assert logger.peek_results(logger.reduce(), compile=False) == {
        "loss": [1.0],
        "n": {"items": ["a", "b"]},
    }


# --- items logged as numpy arrays (images, videos) ------------------------------------------------


def test_arrays_logged_as_items_come_back_as_arrays_everywhere(ship: Ship) -> None:
    # Tune's and W&B's loggers recognise images and videos by their dimensions.
    video = np.arange(2 * 3 * 4 * 4, dtype=np.uint8).reshape(2, 3, 4, 4)
    image = np.ones((4, 4, 3), dtype=np.float32)
    runner = MetricsLogger()
    runner.log_value("videos", video, reduce=None)
    runner.log_value("image", image, reduce="item")
    assert runner.peek("videos")[0] is video
    assert runner.peek("image") is image
    assert runner.reduce(compile=True) == {"videos": [video], "image": image}
    runner.log_value("videos", video)
    algo = MetricsLogger()
    algo.aggregate([ship(runner.reduce())], key="env_runners")
    merged = results(algo)["env_runners"]
    for got, want in ((merged["videos"][0], video), (merged["image"], image)):
        assert type(got) is np.ndarray
        assert (got.dtype, got.shape) == (want.dtype, want.shape)
        assert np.array_equal(got, want)


def test_numpy_scalars_logged_as_items_still_become_python_numbers() -> None:
    logger = MetricsLogger()
    logger.log_value("x", np.float32(0.5), reduce="item")
    logger.log_value("y", np.int64(2), reduce=None)
    assert type(logger.peek("x")) is float
    assert [type(v) for v in logger.peek("y")] == [int]
