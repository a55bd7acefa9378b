"""One key's reduction: the numbers RLlib documents, and what happens at reduce()."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from hookbus.metrics import Stats


def pushed(stats: Stats, *values: Any) -> Stats:
    for value in values:
        stats.push(value)
    return stats


# --- the documented numbers -----------------------------------------------------------------


def test_mean_without_window_is_ema_001() -> None:
    stats = pushed(Stats(), 1.0, 2.0)
    assert stats.peek() == pytest.approx(1.01)
    assert stats.settings["reduce"] == "ema"
    assert stats.settings["ema_coeff"] == 0.01


def test_ema_with_a_coefficient() -> None:
    stats = pushed(Stats("ema", ema_coeff=0.5), 1.0, 2.0, 4.0)
    assert stats.peek() == pytest.approx(0.5 * (0.5 * 1.0 + 0.5 * 2.0) + 0.5 * 4.0)


def test_window_3_mean_over_1_to_5_is_4() -> None:
    assert pushed(Stats("mean", window=3), 1, 2, 3, 4, 5).peek() == 4.0


def test_window_2_mean_uses_the_last_two() -> None:
    assert pushed(Stats("mean", window=2), 1.0, 2.0, 3.0).peek() == 2.5


@pytest.mark.parametrize(
    ("reduce", "values", "peeks"),
    [
        ("sum", [1, 2, 3], [1, 3, 6]),
        ("min", [10, 20, 5, 100], [10, 10, 5, 5]),
        ("max", [1, 3, 2, 4], [1, 3, 3, 4]),
        ("lifetime_sum", [1, 2, 3], [1, 3, 6]),
    ],
)
def test_running_reductions(reduce: str, values: list[int], peeks: list[int]) -> None:
    stats = Stats(reduce)
    for value, expected in zip(values, peeks, strict=True):
        stats.push(value)
        assert stats.peek() == expected


def test_max_window_2_forgets_the_old_max() -> None:
    stats = Stats("max", window=2)
    for value, expected in [(2, 2), (3, 3), (1, 3), (-1, 1)]:
        stats.push(value)
        assert stats.peek() == expected


def test_min_window_2() -> None:
    assert pushed(Stats("min", window=2), 0.1, 0.01, 0.1, 0.02).peek() == 0.02


def test_percentiles_over_1_to_10() -> None:
    stats = pushed(Stats("percentiles", window=10), *range(1, 11))
    expected = {0: 1, 50: 5.5, 75: 7.75, 90: 9.1, 95: 9.55, 99: 9.91, 100: 10}
    assert stats.peek() == pytest.approx(expected)


def test_percentiles_over_the_window_only() -> None:
    stats = pushed(Stats("percentiles", window=3, percentiles=[0, 50, 100]), 100, 1, 2, 3)
    assert stats.peek() == {0: 1.0, 50: 2.0, 100: 3.0}


def test_percentiles_with_reduce_none_and_a_window() -> None:
    stats = pushed(Stats(None, percentiles=True, window=5), 3.0, 1.0, 2.0)
    assert stats.settings["reduce"] == "percentiles"
    assert stats.peek()[50] == 2.0


def test_item_is_the_latest_value() -> None:
    stats = pushed(Stats("item"), 1, "two", [3])
    assert stats.peek() == [3]
    assert Stats("item").peek() is None


def test_item_series_with_a_window_keeps_the_last_items() -> None:
    assert pushed(Stats(None, window=3), -5, -4, -3, -2).peek() == [-4, -3, -2]


def test_item_series_without_a_window_empties_on_reduce() -> None:
    stats = pushed(Stats(None), 5.0, 6.0, 7.0)
    assert stats.peek() == [5.0, 6.0, 7.0]
    assert stats.settings["clear_on_reduce"] is True
    stats.reduce()
    assert stats.peek() == []


# --- empty, NaN and types -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "empty"),
    [
        ({}, math.nan),
        ({"window": 3}, math.nan),
        ({"reduce": "min"}, math.nan),
        ({"reduce": "max", "window": 3}, math.nan),
        ({"reduce": "sum"}, 0),
        ({"reduce": "sum", "window": 3}, 0),
        ({"reduce": "lifetime_sum"}, 0),
    ],
)
def test_empty_peeks(settings: dict[str, Any], empty: float) -> None:
    result = Stats(**settings).peek()
    assert result == empty or (math.isnan(empty) and math.isnan(result))


@pytest.mark.parametrize(
    "settings",
    [{}, {"window": 3}, {"reduce": "min"}, {"reduce": "max", "window": 2}, {"reduce": "sum"}],
)
def test_nans_are_ignored(settings: dict[str, Any]) -> None:
    with_nans = pushed(Stats(**settings), math.nan, 2.0, np.nan, 4.0, float("nan"))
    without = pushed(Stats(**settings), 2.0, 4.0)
    assert with_nans.peek() == without.peek()


def test_a_nan_does_not_take_a_window_slot() -> None:
    assert pushed(Stats("mean", window=2), 1.0, 3.0, math.nan).peek() == 2.0


def test_int_values_reduce_to_ints() -> None:
    assert pushed(Stats("max", window=5), 3, 9, 4).peek() == 9
    assert type(pushed(Stats("max", window=5), 3, 9, 4).peek()) is int
    assert type(pushed(Stats("sum", window=5), 3, 9).peek()) is int
    assert type(pushed(Stats("sum"), np.int64(3), 9).peek()) is int
    assert type(pushed(Stats("mean", window=5), 3, 9).peek()) is float
    assert type(pushed(Stats("min", window=5), 3.0, 9).peek()) is float


def test_peeks_are_never_numpy_scalars() -> None:
    for settings in [{}, {"window": 2}, {"reduce": "min"}, {"reduce": "sum"}, {"reduce": "item"}]:
        stats = pushed(Stats(**settings), np.float32(1.5), np.float64(2.5))
        assert type(stats.peek()) in (int, float), settings
    series = pushed(Stats(None, window=4), np.float32(1.5), np.arange(2), np.array(2.5))
    scalar, array, zero_d = series.peek()
    assert (type(scalar), scalar, type(zero_d), zero_d) == (float, 1.5, float, 2.5)
    assert type(array) is np.ndarray  # an array item stays that array
    assert array.tolist() == [0, 1]


def test_items_logged_as_arrays_come_back_as_those_arrays() -> None:
    # Images and videos: Tune's and W&B's loggers recognise them by their dimensions.
    frame = np.zeros((2, 3, 3), dtype=np.uint8)
    for settings in [{"reduce": None}, {"reduce": None, "window": 2}, {"reduce": "item"}]:
        peeked = pushed(Stats(**settings), frame).peek()
        item = peeked if settings["reduce"] == "item" else peeked[0]
        assert item is frame, settings
    nested = pushed(Stats("item"), {"video": frame, "step": np.int64(3)}).peek()
    assert nested["video"] is frame
    assert type(nested["step"]) is int


# --- reduce() -------------------------------------------------------------------------------


def test_windows_slide_across_reduce() -> None:
    stats = pushed(Stats("mean", window=3), 1.0, 2.0)
    stats.reduce()
    assert stats.peek() == 1.5  # still covers the last values
    stats.push(3.0)
    stats.push(4.0)
    assert stats.peek() == 3.0  # mean of 2, 3, 4
    stats.reduce()
    stats.reduce()
    assert stats.peek() == 3.0  # no new values: never NaN


def test_clear_on_reduce_empties_the_key() -> None:
    stats = pushed(Stats("mean", window=3, clear_on_reduce=True), 1.0, 2.0)
    stats.reduce()
    assert math.isnan(stats.peek())
    total = pushed(Stats("sum", clear_on_reduce=True), 2, 3)
    total.reduce()
    assert total.peek() == 0


def test_ema_and_extremes_survive_reduce_unless_cleared() -> None:
    for reduce in ("ema", "min", "max", "item"):
        kept = pushed(Stats(reduce), 4.0)
        kept.reduce()
        assert kept.peek() == 4.0
        cleared = pushed(Stats(reduce, clear_on_reduce=True), 4.0)
        cleared.reduce()
        assert cleared.peek() is None if reduce == "item" else math.isnan(cleared.peek())


def test_reduce_hands_over_only_what_is_new() -> None:
    window = pushed(Stats("mean", window=4), 1.0, 2.0, 3.0)
    assert list(window.reduce()["data"]) == [1.0, 2.0, 3.0]
    window.push(4.0)
    assert list(window.reduce()["data"]) == [4.0]
    assert list(window.reduce()["data"]) == []
    lifetime = pushed(Stats("lifetime_sum"), 5, 6)
    assert lifetime.reduce()["data"] == 11
    lifetime.push(1)
    assert lifetime.reduce()["data"] == 1
    assert lifetime.peek() == 12


def test_more_new_values_than_the_window() -> None:
    stats = Stats("sum", window=3)
    for value in range(100):
        stats.push(value)
    assert list(stats.reduce()["data"]) == [97.0, 98.0, 99.0]
    assert stats.peek() == 97 + 98 + 99
    assert len(stats) == 3


def test_memory_is_bounded_by_the_window() -> None:
    stats = Stats("mean", window=5)
    buffer = stats._buf  # type: ignore[attr-defined]
    for value in range(10_000):
        stats.push(float(value))
    assert stats._buf is buffer  # type: ignore[attr-defined]
    assert buffer.size <= 5 + 32
    assert stats.peek() == np.mean(np.arange(9995, 10_000))


# --- merge ----------------------------------------------------------------------------------


def test_merge_in_parallel_documented_numbers() -> None:
    def merged(settings: dict[str, Any], *runs: list[float]) -> Stats:
        root = Stats(**settings)
        root.merge(pushed(Stats(**settings), *run).reduce() for run in runs)
        return root

    mean = merged({"window": 3}, [0, 1, 2, 3], [4000, 4, 5, 6])
    assert mean.peek() == pytest.approx((3.5 + 4.5 + 4.5) / 3)
    assert merged({"reduce": "max", "window": 3}, [1, 2, 3], [4, 5, 6]).peek() == 6
    assert merged({"reduce": "min", "window": 4}, [1, 2, 1, 4], [5, 0.5, 7, 8]).peek() == 1
    assert merged({"reduce": "sum"}, [1, 2, 0, 3], [4, 5, 6]).peek() == 21
    assert merged({"reduce": "sum", "window": 3}, [50, 25, 10, 5], [75, 100]).peek() == 115


def test_merge_refuses_other_settings() -> None:
    root = Stats("mean", window=3)
    with pytest.raises(ValueError, match=r"'sum' part into a 'mean\[window\]' Stats"):
        root.merge([pushed(Stats("sum"), 1).reduce()])


def test_ema_merge_averages_the_runners() -> None:
    root = Stats("ema")
    root.merge([pushed(Stats("ema"), 1.0).reduce(), pushed(Stats("ema"), 3.0).reduce()])
    assert root.peek() == 2.0
    root.merge([Stats("ema").reduce()])  # nothing new: the value stays
    assert root.peek() == 2.0


# --- throughput -----------------------------------------------------------------------------


def test_throughput_is_an_ema_of_rates(clock: Any) -> None:
    stats = Stats("sum", with_throughput=True, throughput_ema_coeff=0.5)
    stats.push(1)  # starts the clock
    assert math.isnan(stats.peek(throughput=True))
    clock.advance(0.1)
    stats.push(1)
    assert stats.throughput == pytest.approx(10.0)
    clock.advance(0.1)
    stats.push(2)
    assert stats.throughput == pytest.approx(0.5 * 10 + 0.5 * 20)
    assert stats.peek() == 4


def test_throughput_only_on_stats_that_track_it() -> None:
    with pytest.raises(ValueError, match="does not track a throughput"):
        Stats("mean", window=3).peek(throughput=True)


# --- state ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"window": 3},
        {"reduce": "min"},
        {"reduce": "max", "window": 4},
        {"reduce": "sum", "clear_on_reduce": True},
        {"reduce": "lifetime_sum", "with_throughput": True},
        {"reduce": "item"},
        {"reduce": None},
        {"reduce": None, "window": 2},
        {"reduce": "percentiles", "window": 5},
    ],
)
def test_from_state_gives_the_same_stats(settings: dict[str, Any]) -> None:
    stats = pushed(Stats(**settings), 1, 5, 2)
    stats.reduce()
    stats.push(7)
    copy = Stats.from_state(stats.get_state())
    assert copy.settings == stats.settings
    assert repr(copy.peek()) == repr(stats.peek())
    assert repr(copy.reduce()["data"]) == repr(stats.reduce()["data"])


def test_repr_names_the_settings() -> None:
    assert repr(pushed(Stats("mean", window=3), 1)) == (
        "Stats(reduce='mean', window=3; peek=1.0, len=1)"
    )
