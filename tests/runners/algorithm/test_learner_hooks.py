"""on_learner_update_start/_end: around every learner update, on the loop, recorded, replayed."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import msgspec
import numpy as np
import pytest

from hookbus.events import LearnerUpdateEnd, LearnerUpdateStart, TrainResult
from hookbus.kernel import (
    Callback,
    LifecycleError,
    Recorder,
    check_lifecycle,
    read_recording,
    replay,
)
from hookbus.metrics import MetricsLogger
from hookbus.runners import DQNConfig, DQNLearner, PPOConfig, PPOLearner, PPOModule


class LearnerCalls(Callback):
    """Record every learner-hook call: (hook, event, live arguments), and its thread."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, dict[str, Any]]] = []
        self.threads: set[int] = set()
        self.sample_threads: set[int] = set()

    def on_learner_update_start(self, *, event: Any, **kwargs: Any) -> None:
        self.calls.append(("start", event, kwargs))
        self.threads.add(threading.get_ident())

    def on_learner_update_end(self, *, event: Any, **kwargs: Any) -> None:
        self.calls.append(("end", event, kwargs))
        self.threads.add(threading.get_ident())

    def on_sample_end(self, **kwargs: Any) -> None:
        self.sample_threads.add(threading.get_ident())  # an inline runner: the loop's thread


def test_ppo_fires_start_then_end_once_per_update_with_its_live_arguments(
    small_ppo: PPOConfig,
) -> None:
    calls = LearnerCalls()
    with small_ppo.callbacks(calls).build() as algo:
        results = [algo.train(), algo.train()]
    assert [hook for hook, _, _ in calls.calls] == ["start", "end", "start", "end"]
    for (_, start, live), (_, end, _) in zip(calls.calls[::2], calls.calls[1::2], strict=True):
        assert isinstance(start, LearnerUpdateStart)
        assert isinstance(end, LearnerUpdateEnd)
        assert live["learner"] is algo.learner
        assert isinstance(live["learner"], PPOLearner)
        assert isinstance(live["module"], PPOModule)
        assert live["module"] is algo.learner.module
        assert live["metrics_logger"] is not algo.metrics  # the learner's (RLlib)
        assert live["algorithm"] is algo
        assert start.batch_size == sum(map(len, live["batch"])) >= 200
        for event in (start, end):
            assert (event.source, event.module_id, event.update_index) == (
                "algorithm",
                "default_policy",
                0,
            )
            assert event.batch_size == start.batch_size
    iterations = [e.training_iteration for _, e, _ in calls.calls]
    assert iterations == [1, 1, 2, 2]
    # The end event carries the update's stats, as plain floats, as the result reports them.
    for (_, end, _), result in zip(calls.calls[1::2], results, strict=True):
        reported = result["learners"]["default_policy"]
        assert end.stats == {k: reported[k] for k in end.stats}
        assert all(type(v) is float for v in end.stats.values())
    # Handlers run on the event loop's thread, never in the learner's worker thread.
    assert calls.threads == calls.sample_threads


def trained_weights(config: PPOConfig, **callbacks: Any) -> dict[str, np.ndarray]:
    with config.callbacks(**callbacks).build() as algo:
        algo.train()
        return algo.learner.module.get_state()  # type: ignore[no-any-return]


def test_a_start_handler_setting_lr_changes_that_update(small_ppo: PPOConfig) -> None:
    seen: list[float] = []

    def raise_lr(*, learner: Any, **kwargs: Any) -> None:
        learner.lr = 1e-2

    def report_lr(*, event: Any, **kwargs: Any) -> None:
        seen.append(event.stats["default_optimizer_learning_rate"])

    changed = trained_weights(
        small_ppo.training(lr=1e-4),
        on_learner_update_start=[raise_lr],
        on_learner_update_end=[report_lr],
    )
    # The same run configured with lr=1e-2 from the start, no learner hook at all.
    configured = trained_weights(small_ppo.training(lr=1e-2))
    unchanged = trained_weights(small_ppo.training(lr=1e-4))
    assert seen == [1e-2]
    for name, array in changed.items():
        np.testing.assert_array_equal(array, configured[name])
    assert any(not np.array_equal(changed[k], unchanged[k]) for k in changed)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf"), True, "0.1"])
def test_learners_refuse_a_bad_lr(small_ppo: PPOConfig, bad: Any) -> None:
    with small_ppo.build() as algo:
        with pytest.raises(ValueError, match="lr must be a finite number > 0"):
            algo.learner.lr = bad
        assert algo.learner.lr == small_ppo.lr


def tiny_dqn() -> DQNConfig:
    config = (
        DQNConfig()
        .environment("CartPole-v1")
        .reporting(min_sample_timesteps_per_iteration=64)
        .training(num_steps_sampled_before_learning_starts=32, train_batch_size=16)
        .debugging(seed=0)
    )
    assert isinstance(config, DQNConfig)
    return config


def test_dqn_fires_them_around_each_of_its_updates() -> None:
    calls = LearnerCalls()

    def halve_lr(*, learner: Any, **kwargs: Any) -> None:
        learner.lr = learner.lr / 2

    config = tiny_dqn().callbacks(calls, on_learner_update_start=[halve_lr])
    with config.build() as algo:
        results = [algo.train(), algo.train()]
        lr = algo.learner.lr
    hooks = [hook for hook, _, _ in calls.calls]
    assert hooks == ["start", "end"] * (len(hooks) // 2)
    updates = [(e.training_iteration, e.update_index) for h, e, _ in calls.calls if h == "end"]
    per_iteration = [
        round(r["learners"]["default_policy"]["num_module_steps_trained"] / 16) for r in results
    ]
    assert updates == [(i + 1, k) for i, n in enumerate(per_iteration) for k in range(n)]
    assert per_iteration[0] > 0
    for _, event, live in calls.calls:
        assert event.batch_size == 16 == len(live["batch"]["obs"])
        assert isinstance(live["learner"], DQNLearner)
        assert live["module"] is algo.learner.module
    # Each update ran with the lr its start handler set; the result reports the last one.
    assert lr == pytest.approx(tiny_dqn().lr / 2 ** len(updates))
    assert results[-1]["learners"]["default_policy"]["default_optimizer_learning_rate"] == lr


class LogPolicyLoss(Callback):
    """Log each update's policy loss into the learner's logger (its keys: ``learners/<id>``)."""

    def on_learner_update_end(self, *, event: Any, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("policy_loss_seen", event.stats["policy_loss"], reduce="item")


def test_metrics_logged_at_update_end_are_in_that_iterations_result(
    small_ppo: PPOConfig,
) -> None:
    with small_ppo.callbacks(LogPolicyLoss).build() as algo:
        for _ in range(2):
            learners = algo.train()["learners"]["default_policy"]
            assert learners["policy_loss_seen"] == learners["policy_loss"]


def test_a_recorded_run_replays_them_with_the_arguments_replay_can_rebuild(
    small_ppo: PPOConfig, tmp_path: Path
) -> None:
    path = tmp_path / "run.msgpack"
    live = MetricsLogger()
    with small_ppo.callbacks([Recorder(path), LogPolicyLoss]).build() as algo:
        algo.train()
        algo.train()
        live_value = algo.metrics.peek(("learners", "default_policy", "policy_loss_seen"))
    recorded = list(read_recording(path))
    kinds = [type(e) for e in recorded if isinstance(e, LearnerUpdateStart | LearnerUpdateEnd)]
    assert kinds == [LearnerUpdateStart, LearnerUpdateEnd] * 2
    check_lifecycle(recorded)  # the learner updates pair up

    calls = LearnerCalls()
    count = anyio.run(lambda: replay(path, [calls, LogPolicyLoss], metrics_logger=live))
    assert count == len(recorded)
    assert [hook for hook, _, _ in calls.calls] == ["start", "end"] * 2
    loggers = {id(kwargs["metrics_logger"]) for _, _, kwargs in calls.calls}
    assert len(loggers) == 1  # the learner's logger, as live; merged into `live` per update
    assert id(live) not in loggers
    for _, _, kwargs in calls.calls:
        assert [kwargs[name] for name in ("learner", "module", "batch")] == [None] * 3
        assert kwargs["algorithm"].__hookbus_standin__  # the Algorithm's, from the recording
    assert live.peek(("learners", "default_policy", "policy_loss_seen")) == live_value


def test_nobody_subscribed_builds_no_learner_event(small_ppo: PPOConfig) -> None:
    """The algorithm's seq counts only events it built: without subscribers, none."""
    seqs: list[int] = []
    with small_ppo.callbacks(
        on_train_result=[lambda event, **kw: seqs.append(event.seq)]
    ).build() as algo:
        algo.train()
        algo.train()
        algo.bus.subscribe(LearnerUpdateEnd, lambda **kw: None)
        algo.train()
    assert seqs == [0, 1, 3]  # the third iteration built one LearnerUpdateEnd too


def algorithm_events(*events: Any) -> list[Any]:
    """Number ``events`` as the Algorithm's, in order."""
    return [msgspec.structs.replace(e, source="algorithm", seq=i) for i, e in enumerate(events)]


@pytest.mark.parametrize(
    ("events", "rule"),
    [
        (
            [LearnerUpdateEnd(source="algorithm")],
            "on_learner_update_end without its on_learner_update_start",
        ),
        (
            [LearnerUpdateStart(), LearnerUpdateStart(), LearnerUpdateEnd()],
            "on_learner_update_start before the previous update's on_learner_update_end",
        ),
        (
            [LearnerUpdateStart(update_index=0), LearnerUpdateEnd(update_index=1)],
            "iteration, module or update_index are not its start's",
        ),
    ],
    ids=["end-alone", "start-twice", "mismatch"],
)
def test_check_lifecycle_pairs_learner_updates(events: list[Any], rule: str) -> None:
    if events[0].hook == "on_learner_update_end":  # needs a start somewhere to count
        events = [*events, LearnerUpdateStart()]
    with pytest.raises(LifecycleError, match=rule):
        check_lifecycle(algorithm_events(*events))
    check_lifecycle(algorithm_events(LearnerUpdateStart(), LearnerUpdateEnd(), TrainResult()))


class LogsPerUpdate(Callback):
    """Logs into the learner's logger in both learner hooks (RLlib: the Learner's metrics)."""

    def __init__(self) -> None:
        self.loggers: set[int] = set()

    def on_learner_update_start(self, *, metrics_logger: Any, algorithm: Any, **kw: Any) -> None:
        assert metrics_logger is not algorithm.metrics
        self.loggers.add(id(metrics_logger))
        metrics_logger.log_value("updates_started", 1, reduce="sum")

    def on_learner_update_end(self, *, metrics_logger: Any, event: Any, **kw: Any) -> None:
        metrics_logger.log_value("last_batch_size", event.batch_size, reduce="item")


def test_what_learner_hooks_log_appears_beside_the_learners_stats(small_ppo: PPOConfig) -> None:
    handler = LogsPerUpdate()
    with small_ppo.callbacks(handler).build() as algo:
        first = algo.train()
        second = algo.train()
    learner = second["learners"]["default_policy"]
    assert "policy_loss" in learner  # the learner's own stats, beside
    assert first["learners"]["default_policy"]["updates_started"] == 1
    assert learner["updates_started"] == 2  # a lifetime sum, one update per iteration
    assert learner["last_batch_size"] >= 200
    assert len(handler.loggers) == 1  # one learner logger per module, kept across updates
