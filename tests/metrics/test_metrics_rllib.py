"""Cases from RLlib's own metrics tests, replayed against hookbus's public API.

Sources (ray-project/ray): ``rllib/utils/metrics/tests/test_metrics_logger.py`` (the version
with ``MetricsLogger(root=True)``, ``with_throughput`` and ``compile()``) and
``rllib/utils/metrics/tests/test_legacy_stats.py`` (the tests of the single-file ``Stats``
that went with it). RLlib sleeps and compares with a tolerance; here the fake ``clock``
fixture moves time, so every figure is exact. Where hookbus differs on purpose, the test
says so; docs/metrics.md lists the differences.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from hookbus.metrics import MetricsLogger, Stats, results

# --- throughput: the clock starts at a key's first log ---------------------------------------


def test_bare_stats_throughput_is_nan_until_the_second_push(clock: Any) -> None:
    # RLlib test_basic_throughput. RLlib's bare Stats defaults to coefficient 0.01 there
    # (its logger to 0.05); hookbus uses 0.05 for both, so the test names the 0.01.
    stats = Stats("sum", with_throughput=True, throughput_ema_coeff=0.01)
    stats.push(1)
    assert stats.peek() == 1
    assert math.isnan(stats.throughput)
    clock.advance(0.1)
    stats.push(1)
    assert stats.peek() == 2
    assert stats.throughput == pytest.approx(10.0)
    clock.advance(0.1)
    stats.push(2)
    assert stats.peek() == 4
    assert stats.throughput == pytest.approx(0.99 * 10.0 + 0.01 * 20.0)  # RLlib's 10.1


def test_logger_throughput_ignores_the_time_before_the_first_log(clock: Any) -> None:
    # RLlib test_throughput_tracking: 1, then 100 logs of 2 a millisecond apart.
    logger = MetricsLogger()
    clock.advance(5.0)  # the logger idles first: no rate may cover these 5 s
    logger.log_value("count", 1, reduce="sum", with_throughput=True)
    assert math.isnan(logger.peek("count", throughput=True))
    for _ in range(100):
        clock.advance(0.001)
        logger.log_value("count", 2, reduce="sum", with_throughput=True)
    assert logger.peek("count") == 201
    assert logger.peek("count", throughput=True) == pytest.approx(2000.0)


def test_first_throughput_is_the_first_rate_not_an_ema_from_zero(clock: Any) -> None:
    # RLlib test_compile: "initial throughput" 20 and 40 after one 0.1 s gap.
    logger = MetricsLogger()
    logger.log_value("count", 1, reduce="sum", with_throughput=True)
    clock.advance(0.1)
    logger.log_value("count", 2, reduce="sum", with_throughput=True)
    logger.log_value(("nested", "count"), 3, reduce="sum", with_throughput=True)
    clock.advance(0.1)
    logger.log_value(("nested", "count"), 4, reduce="sum", with_throughput=True)
    logger.log_value("simple", 5.0)
    logger.log_value("simple", 6.0)
    compiled = results(logger)  # hookbus's counterpart of RLlib's compile()
    assert compiled["count"] == 3
    assert compiled["count_throughput"] == pytest.approx(20.0)
    assert compiled["nested"]["count"] == 7
    assert compiled["nested"]["count_throughput"] == pytest.approx(40.0)
    assert compiled["simple"] == pytest.approx(5.01)
    assert "simple_throughput" not in compiled


def test_throughput_with_coefficient_one_is_the_last_rate(clock: Any) -> None:
    # The throughput example of RLlib's MetricsLogger docstring.
    logger = MetricsLogger()
    logger.log_value("samples", 1.0, reduce="sum", with_throughput=True, throughput_ema_coeff=1.0)
    clock.advance(1.0)
    logger.log_value("samples", 2.0, reduce="sum", with_throughput=True, throughput_ema_coeff=1.0)
    compiled = results(logger)
    assert compiled["samples"] == 3.0
    assert compiled["samples_throughput"] == pytest.approx(2.0)


def test_aggregated_throughput_is_nan_at_first_then_a_rate_per_merge(clock: Any) -> None:
    # RLlib test_throughput_aggregation: three EnvRunners, lifetime counters.
    runners = [MetricsLogger() for _ in range(3)]
    main = MetricsLogger()

    def count(runner: MetricsLogger, amount: int) -> None:
        runner.log_value("counter", amount, reduce="sum", with_throughput=True)

    count(runners[0], 0)
    count(runners[1], 0)
    for runner in runners:
        runner.reduce()  # RLlib pulls these once and drops them
    for _ in range(5):
        clock.advance(0.1)
        count(runners[0], 1)
        count(runners[1], 5)
    main.aggregate([runner.reduce() for runner in runners])
    assert main.peek("counter") == 30
    # The key did not exist in `main` before this merge: no rate yet.
    assert math.isnan(main.peek("counter", throughput=True))

    for _ in range(5):
        clock.advance(0.2)
        count(runners[0], 1)
        count(runners[1], 2)
    main.aggregate([runner.reduce() for runner in runners])
    assert main.peek("counter") == 45
    assert main.peek("counter", throughput=True) == pytest.approx(15.0)  # 15 in 1 s

    clock.advance(1.0)
    count(runners[2], 50)
    main.aggregate([runners[2].reduce()])
    assert main.peek("counter") == 95
    # The EMA (0.05) moves only slightly towards 50/s: RLlib expects 16 +- 2.
    assert main.peek("counter", throughput=True) == pytest.approx(0.95 * 15.0 + 0.05 * 50.0)


# --- peek(throughput=True): RLlib's "<name>_throughput" names ----------------------------------


def test_throughput_peeks_of_a_leaf_a_subtree_and_the_whole_tree(clock: Any) -> None:
    # RLlib test_throughput_tracking, the nested half.
    logger = MetricsLogger()
    for key, amount in (("count", 2), (("nested", "count"), 3)):
        logger.log_value(key, 1, reduce="sum", with_throughput=True)
        for _ in range(100):
            clock.advance(0.001)
            logger.log_value(key, amount)
    logger.log_value(("nested", "loss"), 0.5)  # tracks no throughput: left out
    assert logger.peek(("nested", "count")) == 301
    assert logger.peek(("nested", "count"), throughput=True) == pytest.approx(3000.0)
    assert logger.peek("nested", throughput=True) == {"count_throughput": pytest.approx(3000.0)}
    assert logger.peek(throughput=True) == {
        "count_throughput": pytest.approx(2000.0),
        "nested": {"count_throughput": pytest.approx(3000.0)},
    }


def test_throughput_peek_of_a_subtree_without_throughputs_is_empty() -> None:
    logger = MetricsLogger()
    logger.log_value(("timers", "sample"), 0.5)
    assert logger.peek("timers", throughput=True) == {}
    with pytest.raises(ValueError, match="does not track a throughput"):
        logger.peek(("timers", "sample"), throughput=True)


# --- len() after a clearing reduce ----------------------------------------------------------


def test_cleared_sum_holds_nothing() -> None:
    # RLlib test_reduce_with_clear and test_reduce_history_with_clear.
    stats = Stats("sum", clear_on_reduce=True)
    assert len(stats) == 0  # RLlib: a Stats made without values has an empty list
    stats.push(1)
    stats.push(2)
    assert len(stats) == 1  # RLlib keeps an unwindowed sum as one running value
    assert stats.reduce()["data"] == 3
    assert len(stats) == 0
    assert stats.peek() == 0
    assert len(Stats.from_state(stats.get_state())) == 0  # a checkpoint keeps it empty
    stats.push(3)
    stats.push(4)
    assert stats.reduce()["data"] == 7
    assert len(stats) == 0


def test_lifetime_sum_is_never_emptied() -> None:
    stats = Stats("lifetime_sum")
    stats.push(5)
    stats.reduce()
    assert len(stats) == 1
    assert stats.peek() == 5


@pytest.mark.parametrize(
    "settings",
    [
        {"reduce": "mean", "window": 3},
        {"reduce": "ema"},
        {"reduce": "min"},
        {"reduce": "max", "window": 3},
        {"reduce": "sum"},
        {"reduce": "sum", "window": 3},
        {"reduce": "sum", "with_throughput": True},
        {"reduce": "item"},
        {"reduce": "item_series", "window": 3},
        {"reduce": "percentiles", "window": 3},
    ],
)
def test_every_kind_holds_nothing_after_a_clearing_reduce(settings: dict[str, Any]) -> None:
    logger = MetricsLogger()
    for value in (1, 2):
        logger.log_value("key", value, clear_on_reduce=True, **settings)
    logger.reduce()
    stats = dict(logger.items())[("key",)]
    assert len(stats) == 0


def test_cleared_ema_peeks_nan() -> None:
    # RLlib test_edge_cases: a cleared EMA has no value left.
    logger = MetricsLogger()
    logger.log_value("clear_test", 0.1, clear_on_reduce=True)
    logger.log_value("clear_test", 0.2, clear_on_reduce=True)
    assert logger.peek("clear_test") == pytest.approx(0.101)
    logger.reduce()
    assert math.isnan(logger.peek("clear_test"))


def test_an_idle_runner_leaves_a_cleared_sum_empty_at_the_algorithm() -> None:
    # RLlib skips empty Stats when it merges: nothing logged means nothing merged.
    runner, algorithm = MetricsLogger(), MetricsLogger()
    runner.log_value("num_episodes", 2, reduce="sum", clear_on_reduce=True)
    algorithm.aggregate([runner.reduce()])
    assert algorithm.peek("num_episodes") == 2
    algorithm.reduce()
    algorithm.aggregate([runner.reduce()])  # the runner logged nothing this time
    merged = dict(algorithm.items())[("num_episodes",)]
    assert len(merged) == 0
    assert algorithm.peek("num_episodes") == 0


# --- percentiles need a window ------------------------------------------------------------------

DEFAULT_PERCENTILES = [0, 50, 75, 90, 95, 99, 100]


def test_percentiles_over_a_sliding_window() -> None:
    # RLlib test_percentiles: window 10 over 0..10 keeps 1..10.
    stats = Stats("percentiles", window=10)
    for value in range(11):
        stats.push(value)
    expected = np.percentile(np.arange(1, 11), DEFAULT_PERCENTILES)
    assert stats.peek() == pytest.approx(dict(zip(DEFAULT_PERCENTILES, expected, strict=True)))
    backwards = Stats("percentiles", window=10, percentiles=[0, 50])
    for value in reversed(range(10)):
        backwards.push(value)
    assert backwards.peek() == {0: 0.0, 50: 4.5}


def test_merged_percentiles_cover_every_runner() -> None:
    # RLlib test_percentiles: even and odd numbers from two runners, window 20.
    evens, odds = Stats("percentiles", window=20), Stats("percentiles", window=20)
    for value in range(0, 10, 2):
        evens.push(value)
        odds.push(value + 1)
    merged = Stats("percentiles", window=20)
    merged.merge([evens.reduce(), odds.reduce()])
    expected = np.percentile(np.arange(10), DEFAULT_PERCENTILES)
    assert merged.peek() == pytest.approx(dict(zip(DEFAULT_PERCENTILES, expected, strict=True)))


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        # RLlib: "A window must be specified when reduce is 'percentiles'!"
        ({"reduce": "percentiles"}, r"needs a finite window, not window=None"),
        ({"reduce": "percentiles", "window": math.inf}, r"needs a finite window"),
        ({"reduce": None, "percentiles": True}, r"needs a finite window"),
        ({"reduce": "percentiles", "window": 5, "percentiles": 0.5}, r"must be a list"),
        ({"reduce": "percentiles", "window": 5, "percentiles": ["x"]}, r"each must be a number"),
        ({"reduce": "percentiles", "window": 5, "percentiles": [-1, 50]}, r"holds -1; each"),
        ({"reduce": "mean", "window": 5, "percentiles": [50]}, r"only allowed with reduce="),
    ],
)
def test_percentiles_settings_are_checked(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Stats(**settings)
    logger = MetricsLogger()
    with pytest.raises(ValueError, match=message):
        logger.log_value("latency", 1.0, **settings)
    assert "latency" not in logger  # a refused first log creates no key
