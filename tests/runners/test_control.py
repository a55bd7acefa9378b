"""Control results in training: train()'s result["control"] and the CLI honouring it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hookbus.kernel import Bus, Callback, Control
from hookbus.runners import PPOConfig
from hookbus.runners.app._cli import main

CALLBACKS = Path(__file__).parent / "app" / "control_callbacks.py"
NOTHING = {
    "stop_training": False,
    "checkpoint": False,
    "evaluate": False,
    "end_episode": False,
    "reason": "",
    "requested_by": {},
}


class StopAtSecond(Callback):
    def on_train_result(self, *, result: dict[str, Any], **kwargs: Any) -> Control | None:
        if result["training_iteration"] == 2:
            return Control(stop_training=True, reason="enough")
        return None


class EvaluationSaysStop(Callback):
    async def on_evaluate_end(self, **kwargs: Any) -> Control:
        return Control(stop_training=True, checkpoint=True)


class RunnerAsks(Callback):
    def on_sample_end(self, **kwargs: Any) -> Control:
        return Control(evaluate=True)

    async def on_episode_end(self, **kwargs: Any) -> Control:
        return Control(checkpoint=True)


def test_train_reports_what_on_train_result_handlers_asked_and_who(
    small_ppo: PPOConfig,
) -> None:
    with small_ppo.callbacks(StopAtSecond).build() as algo:
        first, second = algo.train(), algo.train()
    assert first["control"] == NOTHING
    assert second["control"] == {
        "stop_training": True,
        "checkpoint": False,
        "evaluate": False,
        "end_episode": False,
        "reason": "enough",
        "requested_by": {"stop_training": ["StopAtSecond.on_train_result"]},
    }


def test_on_evaluate_end_requests_reach_the_same_iterations_result(
    small_ppo: PPOConfig,
) -> None:
    config = small_ppo.evaluation(evaluation_interval=2, evaluation_duration=2)
    with config.callbacks(EvaluationSaysStop).build() as algo:
        first, second = algo.train(), algo.train()
        algo.evaluate()  # between two train() calls: reported by the next result
        third = algo.train()
    assert first["control"] == NOTHING
    who = ["EvaluationSaysStop.on_evaluate_end"]
    assert second["control"]["requested_by"] == {"stop_training": who, "checkpoint": who}
    assert third["control"]["stop_training"]
    assert third["control"]["checkpoint"]
    assert "evaluation" not in second["control"]


def test_in_process_runners_requests_are_reported_and_then_forgotten(
    small_ppo: PPOConfig,
) -> None:
    with small_ppo.callbacks(RunnerAsks).build() as algo:
        control = algo.train()["control"]
        algo.stop()  # nothing to do with control; the Algorithm acts alone on nothing
    assert control["evaluate"]
    assert control["checkpoint"]
    assert not control["stop_training"]
    assert control["requested_by"] == {
        "evaluate": ["RunnerAsks.on_sample_end"],
        "checkpoint": ["RunnerAsks.on_episode_end"],
    }


@pytest.mark.anyio
async def test_atrain_reports_controls_inside_an_event_loop(small_ppo: PPOConfig) -> None:
    async with Bus(StopAtSecond) as bus:
        async with small_ppo.build(bus=bus) as algo:
            await algo.atrain()
            result = await algo.atrain()
    assert result["control"]["requested_by"] == {"stop_training": ["StopAtSecond.on_train_result"]}


def test_the_cli_stops_when_a_handler_asks_and_says_who(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["train", "--env", "CartPole-v1", "--iterations", "5", "--seed", "0"]
    code = main([*argv, "--callbacks", f"{CALLBACKS}:StopAtSecond"])
    out = capsys.readouterr().out
    assert code == 0
    assert "stopped: stop_training requested by StopAtSecond.on_train_result (enough)" in out
    assert "iter 3" not in out


def test_the_cli_checkpoints_and_evaluates_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["train", "--env", "CartPole-v1", "--iterations", "2", "--seed", "0", "--callbacks"]
    argv.append(f"{CALLBACKS}:CheckpointAndEvaluateAtSecond")
    assert main(argv) == 0
    out = capsys.readouterr().out
    who = "CheckpointAndEvaluateAtSecond.on_train_result"
    assert f"checkpoint requested by {who}: cannot save without --logdir" in out
    assert f"evaluation requested by {who}: return" in out
    assert main([*argv, "--logdir", str(tmp_path)]) == 0
    assert (tmp_path / "checkpoint_000002").is_dir()
