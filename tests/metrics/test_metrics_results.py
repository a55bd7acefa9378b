"""results(): the nested results dict the Algorithm returns, with plain values only.

Plain means Python numbers, strings, lists and dicts, never a numpy scalar; the one
exception is an item logged as a numpy array (an image, a video), which stays that array so
that Tune's and W&B's loggers recognise it by its dimensions.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from hookbus.metrics import MetricsLogger, results

PLAIN = (int, float, str, bool, type(None))


def assert_plain(tree: Any, *, arrays: bool = False) -> None:
    if arrays and isinstance(tree, np.ndarray):
        return
    if isinstance(tree, dict):
        for key, value in tree.items():
            assert type(key) in PLAIN
            assert_plain(value)
    elif isinstance(tree, list):
        for item in tree:
            assert_plain(item)
    else:
        assert type(tree) in PLAIN, (tree, type(tree))


def iteration_of_two_runners(clock: Any) -> MetricsLogger:
    runners = [MetricsLogger() for _ in range(2)]
    algo = MetricsLogger()
    clock.advance(4.0)
    for index, runner in enumerate(runners):
        for ret in (10.0 * (index + 1), np.float32(20.0)):
            runner.log_value("episode_return_mean", ret, window=100)
            runner.log_value("episode_return_min", ret, reduce="min", window=100)
            runner.log_value("episode_return_max", ret, reduce="max", window=100)
        runner.log_value("episode_len_mean", np.int64(20), window=100)
        runner.log_value("num_episodes", 2, reduce="sum", clear_on_reduce=True)
        runner.log_value("num_env_steps_sampled", 40, reduce="sum", clear_on_reduce=True)
        runner.log_value(
            "num_env_steps_sampled_lifetime", 40, reduce="lifetime_sum", with_throughput=True
        )
        runner.log_value("theta1_mean", np.float64(0.5), window=50)
        runner.log_value("actions", np.array([0, 1], dtype=np.int64), reduce=None)
    algo.aggregate([r.reduce() for r in runners], key="env_runners")
    algo.log_value("training_iteration", 1, reduce="item")
    algo.log_dict({"default_policy": {"loss": np.float32(0.25)}}, key="learners", window=1)
    return algo


def test_results_are_nested_plain_data(clock: Any) -> None:
    result = results(iteration_of_two_runners(clock))
    actions = result["env_runners"].pop("actions")
    assert_plain(result)
    runners = result["env_runners"]
    assert runners["episode_return_mean"] == pytest.approx(17.5)
    assert runners["episode_return_min"] == 10.0
    assert runners["episode_return_max"] == 20.0
    assert runners["episode_len_mean"] == 20.0
    assert runners["num_episodes"] == 4
    assert runners["num_env_steps_sampled"] == 80
    assert runners["num_env_steps_sampled_lifetime"] == 80
    # The Algorithm's first merge of a key only starts its clock: NaN, as in RLlib.
    assert math.isnan(runners["num_env_steps_sampled_lifetime_throughput"])
    assert runners["theta1_mean"] == 0.5
    # Items logged as arrays come back as those arrays (dtype and shape), in a list.
    assert type(actions) is list
    assert all(type(a) is np.ndarray and a.dtype == np.int64 for a in actions)
    assert [a.tolist() for a in actions] == [[0, 1], [0, 1]]
    assert result["training_iteration"] == 1
    assert result["learners"] == {"default_policy": {"loss": 0.25}}


def test_results_of_a_subtree(clock: Any) -> None:
    algo = iteration_of_two_runners(clock)
    assert results(algo, key="learners") == {"default_policy": {"loss": 0.25}}
    assert results(algo, key="missing") == {}
    with pytest.raises(ValueError, match="is a single metric"):
        results(algo, key="training_iteration")


def test_results_change_nothing(clock: Any) -> None:
    algo = iteration_of_two_runners(clock)
    assert results(algo) == results(algo)
    algo.reduce()  # closes the iteration: per-iteration counts clear, windows slide
    after = results(algo)["env_runners"]
    assert after["num_env_steps_sampled"] == 0
    assert after["episode_return_mean"] == pytest.approx(17.5)


def test_results_of_an_empty_logger() -> None:
    assert results(MetricsLogger()) == {}


def test_nan_results_are_floats() -> None:
    logger = MetricsLogger()
    logger.log_value("r", math.nan, window=3)
    assert math.isnan(results(logger)["r"])
