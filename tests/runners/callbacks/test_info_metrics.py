"""InfoMetrics: the spec checked when it is made, the values it takes, missing keys,
multi-agent episodes, and its metrics in hookbus's runner against numpy, live and replayed."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hookbus.kernel import ConfigError, HookbusWarning, Recorder, replay_into
from hookbus.metrics import MetricsLogger, results
from hookbus.runners import (
    Episode,
    InfoMetrics,
    MultiAgentEpisode,
    PPOConfig,
    make_multi_agent,
    register_env,
)
from tests.runners.info_envs import FinalPositions, InfoCartPole, reduced

WINDOW = 8
SPEC = {"is_success": "mean", "x_position": ["min", "max", "mean", "sum"]}
KEYS = ("is_success", "x_position_min", "x_position_max", "x_position_mean", "x_position_sum")


def ended(*infos: dict[str, Any]) -> Episode:
    """Return an ended single-agent episode of one step per info (the last info last)."""
    episode = Episode()
    episode.add_reset(np.zeros(1), {})
    for i, info in enumerate(infos):
        episode.add_step(np.zeros(1), 0, 1.0, i == len(infos) - 1, False, info)
    return episode


def logged(
    metrics: InfoMetrics, *episodes: Any, logger: MetricsLogger | None = None
) -> dict[str, Any]:
    """Run ``metrics``' episode-end hook on each episode; return what it logged (into
    ``logger``, or a new one)."""
    logger = MetricsLogger() if logger is None else logger
    for episode in episodes:
        metrics.on_episode_end(episode=episode, metrics_logger=logger)
    return results(logger)


# --- names and reductions ---------------------------------------------------------------------


def test_one_reduction_logs_under_the_key_a_list_as_key_underscore_reduction() -> None:
    metrics = InfoMetrics({"is_success": "mean", "x": ["min", "max", "mean"], "n": ["sum"]})
    episodes = [ended({"x": 0.5}, {"x": x, "is_success": s, "n": 2}) for x, s in [(1, 1), (3, 0)]]
    assert logged(metrics, *episodes) == {
        "is_success": 0.5,
        "x_min": 1,
        "x_max": 3,
        "x_mean": 2.0,
        "n_sum": 4,  # a list of one still names its reduction
    }
    assert metrics.spec == {"is_success": "mean", "x": ("min", "max", "mean"), "n": ("sum",)}


def test_each_reduction_runs_over_the_last_window_episodes() -> None:
    metrics = InfoMetrics({"v": ["mean", "min", "max", "sum"]}, window=2)
    got = logged(metrics, *(ended({"v": v}) for v in (5, 1, 2, 3)))
    assert got == {"v_mean": 2.5, "v_min": 2, "v_max": 3, "v_sum": 5}


def test_without_a_window_mean_is_an_ema_and_sum_a_running_total() -> None:
    metrics = InfoMetrics({"v": ["mean", "min", "max", "sum"]}, window=None)
    got = logged(metrics, *(ended({"v": v}) for v in (1.0, 2.0, 3.0, 0.5)))
    ema = 1.0
    for value in (2.0, 3.0, 0.5):
        ema = 0.99 * ema + 0.01 * value
    assert got == {"v_mean": pytest.approx(ema), "v_min": 0.5, "v_max": 3.0, "v_sum": 6.5}


# --- the values it takes ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "number"),
    [
        (True, 1),
        (np.bool_(False), 0),
        (3, 3),
        (2.5, 2.5),
        (np.float32(0.5), 0.5),
        (np.int64(7), 7),
        (np.array(4.0), 4.0),
        (np.array([6]), 6),
        (np.array([[1.5]]), 1.5),
        (Fraction(1, 4), 0.25),
    ],
)
def test_numbers_bools_and_one_element_arrays_are_logged(value: Any, number: float) -> None:
    got = logged(InfoMetrics({"v": "max"}), ended({"v": value}))["v"]
    assert got == number
    assert type(got) is type(number)


@pytest.mark.parametrize(
    ("value", "described"),
    [
        ("left", "a str: 'left'"),
        (None, "a NoneType: None"),
        ([1.0], r"a list: \[1.0\]"),
        ({"a": 1}, "a dict"),
        (1 + 2j, "a complex"),
        (np.str_("x"), "a numpy.str_"),
        (np.array([1.0, 2.0]), r"a numpy.ndarray of shape \(2,\) and dtype float64"),
        (np.array([]), r"a numpy.ndarray of shape \(0,\)"),
    ],
)
def test_a_value_that_is_not_a_number_is_one_error_naming_key_and_type(
    value: Any, described: str
) -> None:
    metrics = InfoMetrics({"ok": "mean", "v": "mean"})
    with pytest.raises(ConfigError, match=rf"info key 'v' holds {described}.*, not a number"):
        logged(metrics, ended({"ok": 1.0, "v": value}))


# --- the spec, checked when made --------------------------------------------------------------

ALLOWED = re.escape("allowed: 'mean', 'min', 'max', 'sum'")


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ([("x", "mean")], r"non-empty dict .* got \[\('x', 'mean'\)\]"),
        ({}, r"non-empty dict .* got \{\}"),
        ({1: "mean"}, "info key 1 must be a non-empty str"),
        ({"": "mean"}, "info key '' must be a non-empty str"),
        ({"x": "median"}, rf"reduction 'median' of 'x' is not one InfoMetrics logs; {ALLOWED}"),
        ({"x": ["min", "percentiles"]}, rf"reduction 'percentiles' of 'x' .*{ALLOWED}"),
        ({"x": "ema"}, rf"reduction 'ema' of 'x' .*{ALLOWED}"),
        ({"x": []}, r"reductions of 'x' must be a str or a non-empty list of str, not \[\]"),
        ({"x": ["min", 3]}, r"reductions of 'x' must be .* not \['min', 3\]"),
        ({"x": None}, "reductions of 'x' must be .* not None"),
        ({"x": b"min"}, "reductions of 'x' must be .* not b'min'"),
        ({"x": ["min", "min"]}, r"reductions of 'x' repeat one: \['min', 'min'\]"),
        (
            {"x": ["min"], "x_min": "mean"},
            r"'x_min': 'mean' and 'x': 'min' would both log under 'x_min'",
        ),
        ({"info_missing": "sum"}, "'info_missing': 'sum' and the missing-key counts"),
    ],
)
def test_a_bad_spec_is_refused_when_made(spec: Any, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        InfoMetrics(spec)


@pytest.mark.parametrize("window", [0, -1, 1.5, True, "100", float("inf")])
def test_a_bad_window_is_refused_when_made(window: Any) -> None:
    with pytest.raises(ConfigError, match=rf"window={re.escape(repr(window))} must be a positive"):
        InfoMetrics({"x": "mean"}, window=window)


def test_a_whole_window_type_is_taken() -> None:
    assert InfoMetrics({"x": "mean"}, window=np.int64(5)).window == 5
    assert InfoMetrics({"x": "mean"}, window=None).window is None


# --- missing keys -----------------------------------------------------------------------------


def test_a_missing_key_is_skipped_counted_and_named_once_in_a_warning() -> None:
    metrics = InfoMetrics({"x": "max", "y": "sum"})
    logger = MetricsLogger()
    with pytest.warns(HookbusWarning) as warned:
        logged(metrics, ended({"x": 1}), ended({"x": 2}), ended({"x": 3}), logger=logger)
    (message,) = [str(w.message) for w in warned]
    assert re.fullmatch(
        r"InfoMetrics: 'y' is not in the last info of episode '[0-9a-f]+' \(its keys: \['x'\]\); "
        r"such episodes are skipped for 'y' and counted in InfoMetrics\.missing and under "
        r"'info_missing/y' \(this warning is given once per key\)",
        message,
    )
    assert metrics.missing == {"x": 0, "y": 3}
    assert results(logger) == {"x": 3, "info_missing": {"y": 3}}
    # Once there, it is logged; missing again, it is counted without a second warning
    # (pytest turns any warning into an error here).
    assert logged(metrics, ended({"x": 0, "y": 5}), ended({"x": 0}), logger=logger) == {
        "x": 3,
        "y": 5,
        "info_missing": {"y": 4},
    }
    assert metrics.missing == {"x": 0, "y": 4}
    with pytest.warns(HookbusWarning, match="'y' is not in"):  # once per instance
        logged(InfoMetrics({"y": "sum"}), ended({"x": 1}))


def test_the_missing_counts_are_its_state() -> None:
    metrics = InfoMetrics({"x": "max", "y": "sum"})
    with pytest.warns(HookbusWarning):
        logged(metrics, ended({"x": 1}), ended({"x": 2}))
    state = metrics.get_state()
    assert state == {"missing": {"x": 0, "y": 2}}
    restored = InfoMetrics({"x": "max", "y": "sum"})
    restored.set_state(state)
    assert restored.missing == {"x": 0, "y": 2}


def test_an_info_that_is_not_a_dict_is_one_error() -> None:
    with pytest.raises(ConfigError, match=r"last info as a dict; episode '.+' has a list: \[1\]"):
        logged(InfoMetrics({"x": "max"}), ended([1]))  # type: ignore[arg-type]


# --- multi-agent episodes ---------------------------------------------------------------------


def multi_agent_ended(final_infos: dict[int, dict[str, Any]]) -> MultiAgentEpisode:
    episode = MultiAgentEpisode()
    episode.add_env_reset({0: np.zeros(1), 1: np.zeros(1)}, {0: {"x": -9.0}, 1: {}})
    everyone = dict.fromkeys(final_infos, np.zeros(1))
    done = {"__all__": True}
    episode.add_env_step(everyone, {0: 0, 1: 0}, {0: 1.0, 1: 1.0}, done, {}, final_infos)
    return episode


def test_a_multi_agent_episode_logs_each_agents_last_info() -> None:
    metrics = InfoMetrics({"x": ["mean", "max"], "only_one": "sum", "none": "mean"})
    episode = multi_agent_ended({0: {"x": 1.0, "only_one": 4}, 1: {"x": 3.0}})
    with pytest.warns(HookbusWarning, match=r"'none' is not in .*its keys: \['only_one', 'x'\]"):
        got = logged(metrics, episode)
    # One value per agent that has the key; missing only when no agent's info has it.
    assert got == {"x_mean": 2.0, "x_max": 3.0, "only_one": 4, "info_missing": {"none": 1}}
    assert metrics.missing == {"x": 0, "only_one": 0, "none": 1}


# --- in hookbus's runners ---------------------------------------------------------------------


def test_in_hookbus_runners_each_result_is_numpy_over_the_window_and_replays(
    tmp_path: Path,
) -> None:
    register_env("info_cartpole", InfoCartPole)
    path = tmp_path / "run.msgpack"
    plain = FinalPositions()
    config = (
        PPOConfig()
        .environment("info_cartpole")
        .env_runners(num_envs_per_env_runner=2)  # final infos of an autoresetting vector env
        .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
        .debugging(seed=0)
        .callbacks(callbacks_class=[InfoMetrics(SPEC, window=WINDOW), plain, Recorder(path)])
    )
    with config.build() as algo:
        runs = [algo.train()["env_runners"] for _ in range(3)]
    plain.check_infos()
    assert plain.at_result[-1] > WINDOW  # the window has slid
    for runners, ended_then in zip(runs, plain.at_result, strict=True):
        positions = plain.positions[:ended_then]
        expected = reduced(positions, WINDOW)
        for reduction in ("min", "max", "mean", "sum"):
            assert runners[f"x_position_{reduction}"] == pytest.approx(expected[reduction])
        successes = [float(x > 0.0) for x in positions]
        assert runners["is_success"] == pytest.approx(reduced(successes, WINDOW)["mean"])
    replayed = replay_into(path, [InfoMetrics(SPEC, window=WINDOW)])
    assert {key: replayed.metrics[key] for key in KEYS} == {key: runs[-1][key] for key in KEYS}


def test_missing_counts_from_worker_processes_add_up_in_the_results() -> None:
    metrics = InfoMetrics({"x_position": "mean", "absent": "mean"})
    config = (
        PPOConfig()
        .environment(InfoCartPole)
        .env_runners(num_env_runners=2, backend="process")
        .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
        .debugging(seed=0)
        .callbacks(metrics)
    )
    with config.build() as algo:
        runs = [algo.train()["env_runners"] for _ in range(2)]
    for runners in runs:  # every episode of both workers lacked the key
        assert runners["info_missing"] == {"absent": runners["num_episodes_lifetime"]}
        assert "absent" not in runners
    # The workers counted on their own copies (and warned there): this one saw nothing.
    assert metrics.missing == {"x_position": 0, "absent": 0}


class WordInfoCartPole(InfoCartPole):
    """Says where the cart is in words."""

    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, reward, terminated, truncated, {**info, "x_position": "left"}


def test_a_word_in_an_info_ends_train_with_the_error(small_ppo: PPOConfig) -> None:
    config = small_ppo.environment(WordInfoCartPole).callbacks(InfoMetrics(SPEC))
    with config.build() as algo:
        with pytest.raises(ConfigError, match="info key 'x_position' holds a str: 'left'") as err:
            algo.train()
    assert any("on_episode_end" in note for note in err.value.__notes__)


def test_in_a_multi_agent_run_each_agents_final_position_is_logged() -> None:
    plain = FinalPositions()
    config = (
        PPOConfig()
        .environment(make_multi_agent(InfoCartPole), env_config={"num_agents": 2})
        .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=lambda aid, *a, **kw: f"p{aid}")
        .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
        .debugging(seed=0)
        .callbacks(callbacks_class=[InfoMetrics({"x_position": ["max", "mean"]}), plain])
    )
    with config.build() as algo:
        runners = algo.train()["env_runners"]
    plain.check_infos()
    assert len(plain.positions) > 0
    assert len(plain.positions) % 2 == 0  # both agents of each ended episode
    expected = reduced(plain.positions, 100)
    assert runners["x_position_max"] == expected["max"]
    assert runners["x_position_mean"] == pytest.approx(expected["mean"])
