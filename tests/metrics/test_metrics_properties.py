"""Property tests: windows equal numpy over the last N values; merges match RLlib's procedure."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from hookbus.events.codec import decode_msgpack, encode_msgpack
from hookbus.metrics import MetricsLogger, Stats
from hookbus.metrics._merge import merge_parallel_numpy

NUMPY = {"mean": np.mean, "min": np.min, "max": np.max, "sum": np.sum}

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)
maybe_nan = st.one_of(finite, st.just(math.nan))
# A log: values, each maybe followed by a reduce() (True).
steps = st.lists(st.tuples(maybe_nan, st.booleans()), max_size=200)
reduces = st.sampled_from(["mean", "min", "max", "sum"])
windows = st.integers(min_value=1, max_value=70)


def expected(reduce: str, values: list[float]) -> float:
    if not values:
        return 0.0 if reduce == "sum" else math.nan
    return float(NUMPY[reduce](np.array(values)))


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-12, abs=1e-9)


@given(reduces, windows, steps)
def test_window_equals_numpy_over_the_last_n(reduce: str, window: int, log: list[Any]) -> None:
    stats = Stats(reduce, window=window)
    seen: list[float] = []
    for value, then_reduce in log:
        stats.push(value)
        if value == value:
            seen.append(value)
        assert same(stats.peek(), expected(reduce, seen[-window:]))
        if then_reduce:
            stats.reduce()  # windows slide across reduce(): nothing changes


@given(reduces, windows, steps)
def test_cleared_window_covers_the_values_since_reduce(
    reduce: str, window: int, log: list[Any]
) -> None:
    stats = Stats(reduce, window=window, clear_on_reduce=True)
    since: list[float] = []
    for value, then_reduce in log:
        stats.push(value)
        if value == value:
            since.append(value)
        if then_reduce:
            new = stats.reduce()["data"]
            assert list(new) == pytest.approx(since[-window:])
            since = []
        assert same(stats.peek(), expected(reduce, since[-window:]))


@given(windows, st.lists(finite, min_size=1, max_size=100))
def test_percentiles_equal_numpy(window: int, values: list[float]) -> None:
    stats = Stats("percentiles", window=window)
    for value in values:
        stats.push(value)
    which = [0, 50, 75, 90, 95, 99, 100]
    wanted = np.percentile(values[-window:], which)
    assert list(stats.peek().values()) == pytest.approx(wanted.tolist())


def rllib_merge(reduce: str, runs: list[list[float]], window: int) -> list[float]:
    """RLlib's documented merge_in_parallel, step by step, as a reference."""
    merged: list[float] = []
    for index in range(1, max(map(len, runs), default=0) + 1):
        group = [run[-index] for run in runs if len(run) >= index]
        if reduce == "sum":
            merged.extend(group)
        else:
            value = {"mean": np.mean, "min": np.min, "max": np.max}[reduce](group)
            merged.extend([float(value)] * len(group))
        if len(merged) >= window:
            break
    return list(reversed(merged))[-window:]


runs = st.lists(st.lists(finite, max_size=12), max_size=6)


@given(reduces, windows, runs)
def test_merge_matches_rllib_procedure(reduce: str, window: int, runs: list[list[float]]) -> None:
    root = Stats(reduce, window=window)
    parts = []
    for run in runs:
        stats = Stats(reduce, window=window)
        for value in run:
            stats.push(value)
        parts.append(stats.reduce())
    root.merge(parts)
    reference = rllib_merge(reduce, [run[-window:] for run in runs], window)
    assert list(root.reduce()["data"]) == pytest.approx(reference)


full_runs = st.lists(st.lists(finite, min_size=1, max_size=30), min_size=2, max_size=6)


@pytest.mark.whitebox  # the numpy merge path, taken only for merges too large to generate here
@given(reduces, windows, full_runs)
def test_numpy_merge_matches_rllib_procedure(
    reduce: str, window: int, runs: list[list[float]]
) -> None:
    # merge_parallel takes the numpy path only for large merges: call it directly here.
    arrays = [np.array(run[-window:]) for run in runs]
    merged = merge_parallel_numpy(reduce, arrays, [len(a) for a in arrays], window)
    assert merged.tolist() == pytest.approx(rllib_merge(reduce, runs, window))


counts = st.lists(st.lists(st.integers(0, 100), max_size=5), min_size=1, max_size=4)


@settings(max_examples=50)
@given(st.lists(counts, min_size=1, max_size=6))
def test_aggregated_sums_never_double_count(iterations: list[list[list[int]]]) -> None:
    runners = [MetricsLogger() for _ in range(4)]
    algo = MetricsLogger()
    total = 0
    for per_runner in iterations:
        for logger, values in zip(runners, per_runner, strict=False):
            for value in values:
                logger.log_value("lifetime", value, reduce="lifetime_sum")
                logger.log_value("iteration", value, reduce="sum", clear_on_reduce=True)
                total += value
        snapshots = [logger.reduce() for logger in runners]
        algo.aggregate([decode_msgpack(encode_msgpack(s)) for s in snapshots])
        assert algo.peek("lifetime", default=0) == total
        this_iteration = sum(sum(values) for values in per_runner)
        assert algo.peek("iteration", default=0) == this_iteration
        algo.reduce()


@settings(max_examples=50)
@given(reduces, windows, steps)
def test_state_round_trip_keeps_the_window(reduce: str, window: int, log: list[Any]) -> None:
    stats = Stats(reduce, window=window)
    for value, then_reduce in log:
        stats.push(value)
        if then_reduce:
            stats.reduce()
    copy = Stats.from_state(decode_msgpack(encode_msgpack(stats.get_state())))
    assert same(copy.peek(), stats.peek())
    assert list(copy.reduce()["data"]) == list(stats.reduce()["data"])


@settings(max_examples=60)
@given(reduces, windows, st.lists(st.lists(maybe_nan, max_size=90), max_size=8))
def test_one_runner_merged_every_iteration_peeks_like_the_runner(
    reduce: str, window: int, iterations: list[list[float]]
) -> None:
    # With a single runner nothing is averaged: the root's window is the runner's window.
    runner, algo = MetricsLogger(), MetricsLogger()
    for values in iterations:
        for value in values:
            runner.log_value("x", value, reduce=reduce, window=window)
        algo.aggregate([runner.reduce()])
        if "x" in runner:
            assert same(algo.peek("x", default=math.nan), runner.peek("x"))
