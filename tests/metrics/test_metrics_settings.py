"""Bad settings raise ValueError naming the bad value and what is allowed."""

from __future__ import annotations

import math
from typing import Any

import pytest

from hookbus.metrics import MetricsLogger, Stats


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"reduce": "median"}, r"unknown reduce='median'; allowed: 'mean', 'ema', .*None"),
        ({"window": 3, "ema_coeff": 0.1}, r"window=3 and ema_coeff=0\.1 exclude each other"),
        ({"reduce": "sum", "ema_coeff": 0.1}, r"ema_coeff=0\.1 is only .* not reduce='sum'"),
        ({"reduce": "min", "ema_coeff": 0.1}, r"ema_coeff=0\.1 .* not reduce='min'"),
        ({"reduce": "max", "ema_coeff": 0.1}, r"ema_coeff=0\.1 .* not reduce='max'"),
        ({"reduce": "ema", "window": 5}, r"window=5 is not allowed with reduce='ema'"),
        ({"reduce": "lifetime_sum", "window": 5}, r"window=5 .* reduce='lifetime_sum'"),
        ({"reduce": "item", "window": 5}, r"window=5 is not allowed with reduce='item'"),
        ({"window": 0}, r"window=0 must be a positive whole number"),
        ({"window": -2}, r"window=-2 must be a positive whole number"),
        ({"window": 2.5}, r"window=2\.5 must be a positive whole number"),
        ({"window": True}, r"window=True must be a positive whole number"),
        ({"window": "3"}, r"window='3' must be a positive whole number"),
        ({"window": math.inf}, r"window=inf is not allowed with reduce='mean'"),
        ({"ema_coeff": 0}, r"ema_coeff=0 must be a number in \(0, 1\]"),
        ({"ema_coeff": 1.5}, r"ema_coeff=1\.5 must be a number in \(0, 1\]"),
        ({"reduce": "lifetime_sum", "clear_on_reduce": True}, r"clear_on_reduce=True contra"),
        ({"clear_on_reduce": "yes"}, r"clear_on_reduce='yes' must be True or False"),
        ({"with_throughput": True}, r"with_throughput=True is not allowed with reduce='mean'"),
        ({"reduce": "sum", "window": 3, "with_throughput": True}, r"reduce='sum', window=3"),
        ({"reduce": "sum", "with_throughput": True, "throughput_ema_coeff": 2}, r"=2 must be"),
        ({"reduce": "sum", "percentiles": [50]}, r"percentiles=\[50\] is only allowed"),
        ({"reduce": "percentiles", "window": 5, "percentiles": [50, 101]}, r"holds 101; each"),
        ({"reduce": "percentiles", "window": 5, "percentiles": "50"}, r"percentiles='50' must"),
        ({"reduce": "percentiles"}, r"reduce='percentiles' needs a finite window, not window=No"),
        ({"reduce": "percentiles", "window": math.inf}, r"needs a finite window, not window=inf"),
        ({"reduce": None, "percentiles": True}, r"reduce='percentiles' needs a finite window"),
    ],
)
def test_bad_settings(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Stats(**settings)
    with pytest.raises(ValueError, match=message):
        MetricsLogger().log_value("key", 1.0, **settings)


def test_settings_are_validated_at_the_first_log_only() -> None:
    logger = MetricsLogger()
    logger.log_value("loss", 1.0, window=2)
    logger.log_value("loss", 3.0, reduce="median", window=-1)  # ignored: the key exists
    assert logger.peek("loss") == 2.0


def test_infinite_window_means_no_window_where_that_makes_sense() -> None:
    assert Stats("sum", window=math.inf).settings["window"] is None
    assert Stats(None, window=math.inf).settings["window"] is None


def test_reduce_none_is_item_series() -> None:
    assert Stats(None).settings["reduce"] == "item_series"
