"""The RLlib bridge against real RLlib 2.60: the recorded result is the one ``train()``
returns, RLlib's ways of giving a callback arguments, and stopping from a handler."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from hookbus.events import TrainResult
from hookbus.kernel import Callback, ConfigError, HookbusWarning, read_recording
from hookbus.runners.bridges import rllib_callbacks
from tests.runners.bridges.bridge_callbacks import StepCounts
from tests.runners.bridges.rllib_helpers import ppo_config
from tests.runners.bridges.rllib_test_callbacks import (
    AddsToResult,
    ResultKey,
    ScaledEnds,
    ScaledSteps,
    StopFrom,
    StopOnFirstEnd,
    make_scaled_ends,
)

pytestmark = pytest.mark.usefixtures("ray_cluster")


def _train(config: Any, iterations: int) -> list[dict[str, Any]]:
    algo = config.build_algo()
    try:
        return [algo.train() for _ in range(iterations)]
    finally:
        algo.stop()


# --- the recorded result ----------------------------------------------------------------------


def _added_by_a_function(*, result: dict[str, Any], **kwargs: Any) -> None:
    result["fn_added"] = -result["training_iteration"]


@pytest.mark.parametrize("suffix", ["msgpack", "jsonl"])
def test_the_recorded_result_is_the_one_train_returns(tmp_path: Path, suffix: str) -> None:
    # Keys come from a hookbus handler (in the bridge's chain), from an RLlib callback
    # RLlib calls after the bridge, and from config.callbacks(on_train_result=fn), which
    # RLlib calls after every callback object: all of them before train() returns.
    path = tmp_path / f"run.{suffix}"
    bridge = rllib_callbacks(ResultKey, StepCounts, record=path)
    config = ppo_config(0, bridge).callbacks(
        [bridge, AddsToResult], on_train_result=_added_by_a_function
    )
    returned = _train(config, 3)
    recorded = [e for e in read_recording(path) if isinstance(e, TrainResult)]
    assert [e.training_iteration for e in recorded] == [1, 2, 3]
    for event, result in zip(recorded, returned, strict=True):
        i = result["training_iteration"]
        assert (result["hb_added"], result["rllib_added"], result["fn_added"]) == (i, 10 * i, -i)
        assert set(event.result) == set(result) - {"config"}
        for key in ("hb_added", "rllib_added", "fn_added", "done", "training_iteration"):
            assert event.result[key] == result[key], key
        assert event.result["env_runners"]["hb_steps"] == result["env_runners"]["hb_steps"]


def test_a_result_is_recorded_at_once_where_nothing_calls_back(tmp_path: Path) -> None:
    # Hooks called by hand (no Algorithm.log_result to follow): the result as the chain
    # left it is written right away, the file whole after each driver event.
    path = tmp_path / "run.msgpack"
    callbacks = rllib_callbacks(ResultKey, record=path)()
    result: dict[str, Any] = {"training_iteration": 4}
    callbacks.on_train_result(algorithm=object(), metrics_logger=None, result=result)
    (event,) = read_recording(path)
    assert isinstance(event, TrainResult)
    assert event.result == {"training_iteration": 4, "hb_added": 4}


# --- what config.callbacks(...) takes -----------------------------------------------------------


def test_partials_factories_and_lists_are_taken_as_rllib_takes_them() -> None:
    bridge = rllib_callbacks(
        [functools.partial(ScaledEnds, scale=2.0), functools.partial(ScaledSteps, 0.5)],
        make_scaled_ends,
        StepCounts,
    )
    (result,) = _train(ppo_config(0, bridge), 1)
    runners = result["env_runners"]
    # The two ScaledEnds (2.0 by the partial, 3.0 by the factory) at every episode end.
    assert runners["scaled_ends"] == pytest.approx(5.0 * runners["hb_episodes"])
    assert runners["scaled_steps"] == pytest.approx(0.5 * runners["hb_steps"])
    assert runners["hb_episodes"] > 0


def test_rllibs_own_self_play_callback_is_taken_with_its_argument() -> None:
    from ray.rllib.examples.multi_agent.utils.self_play_callback import SelfPlayCallback

    # As rllib/examples/multi_agent/self_play_with_open_spiel.py gives it.
    bridge = rllib_callbacks(functools.partial(SelfPlayCallback, win_rate_threshold=0.9))
    (spec,) = bridge.hookbus_spec.items
    assert spec.hooks == ["on_train_result", "on_episode_end"]


def test_bad_arguments_for_a_callback_are_refused_at_config_time() -> None:
    with pytest.raises(ConfigError, match=r"argument 0: cannot instantiate ScaledEnds .*'scal'"):
        rllib_callbacks(functools.partial(ScaledEnds, scal=2.0))
    with pytest.raises(ConfigError, match=r"cannot instantiate callback class ScaledSteps"):
        rllib_callbacks(functools.partial(ScaledSteps, 1.0, 2.0))


def test_a_factory_returning_no_callback_fails_when_called(tmp_path: Path) -> None:
    callbacks = rllib_callbacks(lambda: 42)()  # called in each process, as RLlib does
    with pytest.raises(ConfigError, match=r"which returned 42: a callable given to it must"):
        callbacks.on_algorithm_init(algorithm=object(), metrics_logger=None)


# --- stopping from a handler ----------------------------------------------------------------


def test_a_stop_on_the_driver_marks_the_result_done_and_warns_once(tmp_path: Path) -> None:
    path = tmp_path / "run.msgpack"
    config = ppo_config(0, rllib_callbacks(StopFrom(2), record=path))
    said = r"from StopFrom.on_train_result: .* iteration 2's result has done=True"
    with pytest.warns(HookbusWarning, match=said) as warned:
        results = _train(config, 3)
    assert [r["done"] for r in results] == [False, True, True]
    assert len([w for w in warned if issubclass(w.category, HookbusWarning)]) == 1
    recorded = [e.result["done"] for e in read_recording(path) if isinstance(e, TrainResult)]
    assert recorded == [False, True, True]


def test_a_stop_on_an_env_runner_reaches_the_result() -> None:
    # The runner's request travels in RLlib's own metrics, then leaves the result again.
    config = ppo_config(1, rllib_callbacks(StopOnFirstEnd, StepCounts))
    with pytest.warns(HookbusWarning, match=r"1 handler call\(s\) on EnvRunners"):
        first, second = _train(config, 2)
    assert (first["done"], second["done"]) == (True, False)
    assert "hookbus_stop_training" not in first["env_runners"]
    assert "hookbus_stop_training" not in second["env_runners"]


def test_tune_ends_the_trial_at_the_iteration_a_handler_stopped(tmp_path: Path) -> None:
    from ray import tune
    from ray.rllib.algorithms.ppo import PPO  # the class: "PPO" imports every algorithm

    config = ppo_config(0, rllib_callbacks(StopFrom(2)))
    tuner = tune.Tuner(
        PPO,
        param_space=config,
        run_config=tune.RunConfig(
            stop={"training_iteration": 8}, storage_path=str(tmp_path), verbose=0
        ),
    )
    (trial,) = tuner.fit()
    assert trial.error is None
    assert trial.metrics["training_iteration"] == 2
    assert trial.metrics["done"] is True


class _NoStop(Callback):
    def on_train_result(self, **kwargs: Any) -> None:
        return None


def test_without_a_stop_the_result_stays_as_rllib_made_it() -> None:
    (result,) = _train(ppo_config(0, rllib_callbacks(_NoStop)), 1)
    assert result["done"] is False
