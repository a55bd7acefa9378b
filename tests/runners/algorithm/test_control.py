"""Control results in training: train()'s result["control"] and the CLI honouring it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from hookbus.kernel import Bus, Callback, Control
from hookbus.runners import PPOConfig
from hookbus.runners.app._cli import main

sys.path.insert(0, str(Path(__file__).parents[1]))  # so workers and actors import the helpers
import process_helpers

CALLBACKS = Path(__file__).parents[1] / "app" / "control_callbacks.py"
# PPO's 4000 env steps of ten epochs an iteration are not what these tests are about.
SMALL = ["--set", "train_batch_size=200", "--set", "minibatch_size=50", "--set", "num_epochs=1"]
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


@pytest.fixture(params=["process", "ray"])
def two_remote_runners(request: pytest.FixtureRequest, small_ppo: PPOConfig) -> PPOConfig:
    """Two runners in worker processes or Ray actors: handlers run on the workers' buses."""
    if request.param == "ray":
        request.getfixturevalue("ray_cluster")
    return small_ppo.env_runners(
        num_env_runners=2, backend=request.param, num_cpus_per_env_runner=0.5
    )


def test_remote_runners_requests_reach_the_result_with_the_handlers_named(
    two_remote_runners: PPOConfig,
) -> None:
    config = two_remote_runners.callbacks([process_helpers.StopsOnce, process_helpers.EndsAtFive])
    with config.build() as algo:
        first, second = algo.train(), algo.train()
    control = first["control"]
    assert control["stop_training"]
    assert control["end_episode"]
    assert not control["checkpoint"]
    assert control["requested_by"] == {
        "stop_training": ["StopsOnce.on_sample_end"],
        "end_episode": ["EndsAtFive.on_episode_step"],
    }
    assert set(control["reason"].split("; ")) == {"sampled once", "five steps are enough"}
    assert first["env_runners"]["episode_len_max"] == 5  # the workers acted on end_episode
    # The stop was taken with the first result; only the new end_episode requests remain.
    assert second["control"] == {
        **NOTHING,
        "end_episode": True,
        "reason": "five steps are enough",
        "requested_by": {"end_episode": ["EndsAtFive.on_episode_step"]},
    }


def test_a_remote_request_is_reported_once(two_remote_runners: PPOConfig) -> None:
    with two_remote_runners.callbacks(process_helpers.StopsOnce).build() as algo:
        first, second = algo.train(), algo.train()
    assert first["control"]["requested_by"] == {"stop_training": ["StopsOnce.on_sample_end"]}
    assert second["control"] == NOTHING


def test_a_failed_workers_requests_are_not_lost(small_ppo: PPOConfig, tmp_path: Path) -> None:
    # Runner 1's env raises at its 30th step: its worker is ended, and with it whatever the
    # worker had not sent back. The checkpoint it asked for at its first step comes back
    # with the failure's reply.
    env_config = {"fail_on": [1], "how": "raise", "at_step": 30, "marker_dir": str(tmp_path)}
    config = (
        small_ppo.environment(process_helpers.Faulty, env_config=env_config)
        .env_runners(num_env_runners=2, backend="process")
        .fault_tolerance(delay_between_env_runner_restarts_s=0)
        .callbacks(process_helpers.CheckpointAtFirstStep)
    )
    with config.build() as algo:
        result = algo.train()
    assert result["env_runner_group"]["num_healthy_env_runners"] == 1
    assert result["control"]["requested_by"] == {
        "checkpoint": ["CheckpointAtFirstStep.on_episode_step"]
    }
    assert set(result["control"]["reason"].split("; ")) == {"runner 1", "runner 2"}


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
    argv = ["train", "--env", "CartPole-v1", "--iterations", "5", "--seed", "0", *SMALL]
    code = main([*argv, "--callbacks", f"{CALLBACKS}:StopAtSecond"])
    out = capsys.readouterr().out
    assert code == 0
    assert "stopped: stop_training requested by StopAtSecond.on_train_result (enough)" in out
    assert "iter 3" not in out


def test_the_cli_checkpoints_and_evaluates_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["train", "--env", "CartPole-v1", "--iterations", "2", "--seed", "0", *SMALL]
    argv.append("--callbacks")
    argv.append(f"{CALLBACKS}:CheckpointAndEvaluateAtSecond")
    assert main(argv) == 0
    out = capsys.readouterr().out
    who = "CheckpointAndEvaluateAtSecond.on_train_result"
    assert f"checkpoint requested by {who}: cannot save without --logdir" in out
    assert f"evaluation requested by {who}: return" in out
    assert main([*argv, "--logdir", str(tmp_path)]) == 0
    assert (tmp_path / "checkpoint_000002").is_dir()
