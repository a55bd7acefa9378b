"""Every publisher hands handlers exactly the live arguments of kernel.LIVE_ARGS, by name.

The per-step hot path passes them positionally (in LIVE_ARGS order): a publisher whose
order or names drift from the table fails here, because each argument is checked for the
kind of object SPEC.md's hook table promises.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from hookbus.events import HOOKS
from hookbus.kernel import LIVE_ARGS, Callback
from hookbus.metrics import MetricsLogger
from hookbus.runners import (
    Algorithm,
    EnvContext,
    EnvRunner,
    EnvRunnerGroup,
    Episode,
    PPOConfig,
    PPOLearner,
    PPOModule,
    ResultDraft,
)

sys.path.insert(0, str(Path(__file__).parents[1]))  # worker processes import the helpers too
import process_helpers

KINDS: dict[str, Any] = {
    "algorithm": Algorithm,
    "metrics_logger": MetricsLogger,
    "result": dict,
    "draft": ResultDraft,
    "evaluation_metrics": dict,
    "env_runner_group": EnvRunnerGroup,
    "env_runner_indices": list,
    "is_evaluation": bool,
    "env_runner": EnvRunner,
    "env": gym.vector.VectorEnv,
    "env_context": EnvContext,
    "episode": Episode,
    "rl_module": object,
    "env_index": int,
    "samples": list,
    "learner": PPOLearner,  # PPO's, in this module's runs (test_learner_hooks has DQN's)
    "module": PPOModule,
    "batch": list,  # what PPO's learner.update() takes: the episode chunks
}


def test_the_kinds_table_covers_every_live_argument() -> None:
    assert {name for names in LIVE_ARGS.values() for name in names} == set(KINDS)


class Arguments(Callback):
    """Record, per hook, the keyword arguments of every call."""

    def __init__(self) -> None:
        self.calls: dict[str, list[dict[str, Any]]] = defaultdict(list)

    def _record(self, hook: str, kwargs: dict[str, Any]) -> None:
        self.calls[hook].append(kwargs)


for _hook in HOOKS:

    def _handler(self: Arguments, *, _hook: str = _hook, **kwargs: Any) -> None:
        self._record(_hook, kwargs)

    setattr(Arguments, _hook, _handler)


def check(calls: dict[str, list[dict[str, Any]]], hook: str) -> None:
    assert calls[hook], f"{hook} was never published"
    for kwargs in calls[hook]:
        assert set(kwargs) == {"event", *LIVE_ARGS[hook]}, hook
        assert isinstance(kwargs["event"], HOOKS[hook]), hook
        for name in LIVE_ARGS[hook]:
            assert isinstance(kwargs[name], KINDS[name]), (hook, name, kwargs[name])


def test_every_publisher_passes_the_tables_arguments(small_ppo: PPOConfig, tmp_path: Path) -> None:
    recorder = Arguments()
    config = small_ppo.evaluation(evaluation_interval=1, evaluation_duration=2)
    with config.callbacks(recorder).build() as algo:
        algo.train()
        path = algo.save(tmp_path / "ckpt")
        algo.restore(path)
    # RLlib's offline evaluation hooks are the RLlib bridge's alone (hookbus has no offline
    # data): tests/runners/bridges/test_rllib_bridge.py checks their arguments.
    offline = {
        "on_evaluate_offline_start",
        "on_evaluate_offline_end",
        "on_offline_eval_runners_recreated",
    }
    # A recording's gap marker is the RLlib bridge's (a runner lost before its events were taken).
    published = set(HOOKS) - {"on_env_runners_recreated", "on_recording_gap"} - offline
    assert set(recorder.calls) == published
    for hook in published:
        check(recorder.calls, hook)
    evaluating = [c["env_runner"] for c in recorder.calls["on_episode_end"]]
    assert {r.config.in_evaluation for r in evaluating} == {False, True}


def test_on_env_runners_recreated_passes_the_tables_arguments(
    small_ppo: PPOConfig, tmp_path: Path
) -> None:
    recorder = Arguments()
    config = (
        small_ppo.environment(
            process_helpers.Flaky, env_config={"crash_once_on": [2], "marker_dir": str(tmp_path)}
        )
        .env_runners(backend="process")
        .evaluation(evaluation_interval=1, evaluation_duration=4, evaluation_num_env_runners=2)
        .fault_tolerance(delay_between_env_runner_restarts_s=0)
    )
    with config.build() as algo:
        # Subscribed on the Algorithm's bus (nothing of this test module goes to workers).
        algo.bus.subscribe("on_env_runners_recreated", recorder.on_env_runners_recreated)
        algo.train()
        algo.train()
    check(recorder.calls, "on_env_runners_recreated")
    (call,) = recorder.calls["on_env_runners_recreated"]
    assert call["env_runner_indices"] == [2]
    assert call["is_evaluation"] is True


@pytest.mark.parametrize("hook", sorted(LIVE_ARGS))
def test_a_handler_that_takes_only_the_tables_names_is_served(hook: str) -> None:
    """The compiled chain accepts exactly the table's names, by keyword."""
    from hookbus.kernel import Bus

    bus = Bus()
    seen: list[str] = []
    names = LIVE_ARGS[hook]
    exec_globals: dict[str, Any] = {"seen": seen}
    params = ", ".join(["*", "event", *names])
    exec(f"def handler({params}):\n    seen.append('ok')", exec_globals)
    bus.subscribe(hook, exec_globals["handler"])
    bus.dispatcher(hook).call(HOOKS[hook](source="test", seq=0))  # type: ignore[misc]
    assert seen == ["ok"]
