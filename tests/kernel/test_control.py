"""Control results: handlers asking for a stop, checkpoint or evaluation, combined per publish."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from hookbus.events import (
    EpisodeEnd,
    EpisodeStart,
    EpisodeStep,
    EvaluateEnd,
    SampleEnd,
    TrainResult,
)
from hookbus.kernel import CONTROL_HOOKS, Bus, Callback, ConfigError, Control, Publisher

pytestmark = pytest.mark.anyio

RESULT = TrainResult(source="algorithm", seq=0)


class StopSync(Callback):
    def on_train_result(self, **kwargs: Any) -> Control:
        return Control(stop_training=True, reason="return reached")


class CheckpointAsync(Callback):
    async def on_train_result(self, **kwargs: Any) -> Control:
        return Control(checkpoint=True)


class Quiet(Callback):
    def on_train_result(self, **kwargs: Any) -> None:
        return None


async def test_a_sync_handler_control_is_what_publish_returns() -> None:
    with Bus(StopSync) as bus:
        control = await bus.publish(RESULT)
    assert control is not None
    assert control.stop_training
    assert not control.checkpoint
    assert control.requested == ("stop_training",)
    assert control.requested_by == {"stop_training": ("StopSync.on_train_result",)}
    assert control.reason == "return reached"


async def test_an_async_handler_control_is_what_publish_returns() -> None:
    with Bus(CheckpointAsync) as bus:
        control = await bus.publish(RESULT)
    assert control == Control(
        checkpoint=True, requested_by={"checkpoint": ("CheckpointAsync.on_train_result",)}
    )


async def test_several_controls_combine_any_stop_wins_and_each_asker_is_named() -> None:
    def also_stop(**kwargs: Any) -> Control:
        return Control(stop_training=True, evaluate=True, reason="plateau")

    with Bus([Quiet, StopSync, CheckpointAsync], on_train_result=also_stop) as bus:
        control = await bus.publish(RESULT)
    assert control is not None
    assert (control.stop_training, control.checkpoint, control.evaluate) == (True, True, True)
    first, second = control.requested_by["stop_training"]
    assert first == "StopSync.on_train_result"
    assert second.endswith("also_stop")
    assert control.requested_by["checkpoint"] == ("CheckpointAsync.on_train_result",)
    assert control.requested_by["evaluate"][0].endswith("also_stop")
    assert control.reason == "return reached; plateau"


async def test_the_none_path_returns_none() -> None:
    calls: list[str] = []
    with Bus(Quiet, on_train_result=lambda **kw: calls.append("x")) as bus:
        assert await bus.publish(RESULT) is None  # list.append's None, and a non-Control
        assert await bus.publish(EpisodeStep(source="s", seq=0)) is None  # nobody listens
    assert calls == ["x"]


async def test_a_control_asking_nothing_counts_as_none() -> None:
    with Bus(on_train_result=lambda **kw: Control()) as bus:
        assert await bus.publish(RESULT) is None


async def test_other_return_values_are_ignored() -> None:
    async def number(**kwargs: Any) -> int:
        return 3

    with Bus(on_train_result=[lambda **kw: "text", number], on_episode_start=number) as bus:
        assert await bus.publish(RESULT) is None
        assert await bus.publish(EpisodeStart(source="s", seq=0)) is None


@pytest.mark.parametrize(
    ("event", "hook"),
    [
        (EvaluateEnd(source="algorithm", seq=0), "on_evaluate_end"),
        (SampleEnd(source="env_runner:0", seq=0), "on_sample_end"),
        (EpisodeEnd(source="env_runner:0", seq=0, episode_id="e"), "on_episode_end"),
        (EpisodeStep(source="env_runner:0", seq=0, episode_id="e"), "on_episode_step"),
    ],
)
async def test_every_control_hook_returns_the_combined_control(event: Any, hook: str) -> None:
    assert hook in CONTROL_HOOKS
    with Bus(**{hook: lambda **kw: Control(stop_training=True)}) as bus:
        control = await bus.publish(event)
    assert control is not None
    assert control.stop_training


async def test_a_control_from_a_hook_that_does_not_take_one_is_a_config_error() -> None:
    class Starter(Callback):
        def on_episode_start(self, **kwargs: Any) -> Control:
            return Control(stop_training=True)

    with Bus(Starter) as bus:
        with pytest.raises(ConfigError, match=r"Starter.on_episode_start.*on_train_result") as info:
            await bus.publish(EpisodeStart(source="s", seq=0))
    assert "on_evaluate_end" in str(info.value)
    assert "hookbus: raised by handler" in "".join(info.value.__notes__)


async def test_an_async_handlers_result_on_other_hooks_is_not_looked_at() -> None:
    # The price of looking would be paid on every async publish (bench/dispatch.py).
    class AsyncStarter(Callback):
        async def on_episode_start(self, **kwargs: Any) -> Control:
            return Control(stop_training=True)

    with Bus(AsyncStarter) as bus:
        assert await bus.publish(EpisodeStart(source="s", seq=0)) is None
        assert bus.statistics().errors == 0


async def test_a_refused_control_goes_through_the_error_policy(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ran: list[str] = []
    with caplog.at_level(logging.ERROR, logger="hookbus"):
        with Bus(
            on_error="log",
            on_episode_start=[lambda **kw: Control(evaluate=True), lambda **kw: ran.append("x")],
        ) as bus:
            await bus.publish(EpisodeStart(source="s", seq=0))
            assert bus.statistics().errors == 1
    assert ran == ["x"]
    assert "returned a Control" in caplog.text


async def test_controls_survive_log_policy_and_timed_chains() -> None:
    def broken(**kwargs: Any) -> None:
        raise RuntimeError("boom")

    with Bus([StopSync, CheckpointAsync], on_error="log", statistics=True) as bus:
        bus.subscribe(TrainResult, broken)
        control = await bus.publish(RESULT)
    assert control is not None
    assert control.requested == ("stop_training", "checkpoint")


async def test_a_publisher_keeps_controls_until_taken() -> None:
    with Bus(StopSync, on_evaluate_end=lambda **kw: Control(evaluate=True)) as bus:
        publisher = Publisher(bus, "algorithm")
        await publisher.publish(TrainResult)
        await publisher.publish(EvaluateEnd)
        control = publisher.take_control()
        assert control is not None
        assert control.requested == ("stop_training", "evaluate")
        assert control.requested_by["evaluate"][0].endswith("<lambda>")
        assert publisher.take_control() is None


def test_control_reports_as_plain_data() -> None:
    control = Control(
        stop_training=True, reason="done", requested_by={"stop_training": ("A.on_train_result",)}
    )
    assert control.to_result() == {
        "stop_training": True,
        "checkpoint": False,
        "evaluate": False,
        "end_episode": False,
        "reason": "done",
        "requested_by": {"stop_training": ["A.on_train_result"]},
    }
    assert repr(control) == "Control(stop_training by A.on_train_result (done))"
