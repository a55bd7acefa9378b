"""RLlib's example-script harness: options, stop criteria, --as-test, refusals."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from hookbus.events import ConfigError
from hookbus.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME, TRAINING_ITERATION
from hookbus.runners import (
    PPOConfig,
    add_rllib_example_script_args,
    run_rllib_example_script_experiment,
)


def small_config() -> PPOConfig:
    return PPOConfig().training(train_batch_size=200, minibatch_size=50).debugging(seed=0)


def parse(*argv: str, **defaults: Any) -> Any:
    return add_rllib_example_script_args(**defaults).parse_args(list(argv))


def test_the_options_and_defaults_are_rllibs() -> None:
    args = parse()
    assert (args.algo, args.stop_reward, args.stop_iters, args.stop_timesteps) == (
        "PPO",
        100.0,
        200,
        100000,
    )
    assert (args.num_env_runners, args.num_envs_per_env_runner, args.num_agents) == (None, None, 0)
    evaluation = (args.evaluation_interval, args.evaluation_duration)
    assert (*evaluation, args.evaluation_num_env_runners) == (0, 10, 0)
    assert (args.no_tune, args.as_test, args.num_samples, args.checkpoint_freq) == (
        False,
        False,
        1,
        0,
    )
    custom = parse("--evaluation-duration", "auto", default_reward=0.7, default_iters=5)
    assert (custom.stop_reward, custom.stop_iters, custom.evaluation_duration) == (0.7, 5, "auto")


def test_a_parser_of_the_script_gets_the_options_added() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--corridor-length", type=int, default=10)
    assert add_rllib_example_script_args(parser) is parser
    args = parser.parse_args(["--corridor-length", "20", "--no-tune"])
    assert (args.corridor_length, args.no_tune) == (20, True)


def test_no_tune_trains_here_until_the_iterations_are_done(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = parse("--no-tune", "--env", "CartPole-v1", "--stop-iters", "2")
    result = run_rllib_example_script_experiment(small_config(), args)
    assert result[TRAINING_ITERATION] == 2
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[:2]] == ["iter=0", "iter=1"]
    assert lines[2:] == ["Stop criterion (training_iteration=2) fulfilled!"]


def test_the_first_stop_criterion_met_ends_the_run(capsys: pytest.CaptureFixture[str]) -> None:
    args = parse("--no-tune", "--env", "CartPole-v1", "--stop-timesteps", "300")
    result = run_rllib_example_script_experiment(small_config(), args)
    assert result[TRAINING_ITERATION] == 2  # 200 env steps per iteration
    assert result[ENV_RUNNER_RESULTS][NUM_ENV_STEPS_SAMPLED_LIFETIME] >= 300
    out = capsys.readouterr().out
    assert f"Stop criterion ({ENV_RUNNER_RESULTS}/{NUM_ENV_STEPS_SAMPLED_LIFETIME}=300" in out


def test_a_given_stop_replaces_the_default_one() -> None:
    args = parse("--no-tune", "--env", "CartPole-v1")
    result = run_rllib_example_script_experiment(small_config(), args, stop={TRAINING_ITERATION: 1})
    assert result[TRAINING_ITERATION] == 1


def test_rllibs_keep_ray_up_is_taken() -> None:
    # RLlib's self-play examples pass it, to play against the trained policy afterwards.
    args = parse("--no-tune", "--env", "CartPole-v1")
    stop = {TRAINING_ITERATION: 1}
    result = run_rllib_example_script_experiment(small_config(), args, stop=stop, keep_ray_up=True)
    assert result[TRAINING_ITERATION] == 1


def test_as_test_raises_unless_the_success_metric_is_reached(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = parse("--no-tune", "--env", "CartPole-v1", "--stop-iters", "1", "--as-test")
    with pytest.raises(ValueError, match=r"`env_runners/episode_return_mean` of 100.0 not"):
        run_rllib_example_script_experiment(small_config(), args)
    run_rllib_example_script_experiment(
        small_config(), args, success_metric={TRAINING_ITERATION: 1}
    )
    assert "`training_iteration` of 1 reached! ok" in capsys.readouterr().out


def test_the_config_keeps_its_env_and_gets_runner_and_evaluation_options() -> None:
    args = parse(
        "--no-tune",
        "--env",
        "Acrobot-v1",
        "--num-envs-per-env-runner",
        "2",
        "--evaluation-interval",
        "1",
        "--evaluation-duration",
        "1",
        "--stop-iters",
        "1",
    )
    config = small_config().environment("CartPole-v1")
    result = run_rllib_example_script_experiment(config, args)
    assert (config.env, config.num_envs_per_env_runner, config.evaluation_interval) == (
        "CartPole-v1",
        2,
        1,
    )
    assert "evaluation" in result
    kept = small_config().environment("CartPole-v1")
    run_rllib_example_script_experiment(kept, args, keep_config=True)
    assert (kept.num_envs_per_env_runner, kept.evaluation_interval) == (1, None)


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["--output", "out/"], r"--output 'out/': hookbus writes no offline data"),
        (["--num-gpus-per-learner", "1"], r"one numpy learner, on the CPU"),
        (["--num-learners", "2"], r"allowed: --num-learners 0 or 1"),
    ],
)
def test_what_hookbus_does_not_do_is_one_config_error(argv: list[str], match: str) -> None:
    args = parse("--no-tune", "--env", "CartPole-v1", *argv)
    with pytest.raises(ConfigError, match=match):
        run_rllib_example_script_experiment(small_config(), args)


def test_tune_options_without_tune_name_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray.tune", None)  # as if Ray Tune were not installed
    args = parse("--env", "CartPole-v1", "--num-samples", "2")
    with pytest.raises(ConfigError, match=r"pip install 'hookbus\[tune\]'"):
        run_rllib_example_script_experiment(small_config(), args)


def test_without_tune_and_its_options_the_run_happens_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ray.tune", None)
    args = parse("--env", "CartPole-v1", "--stop-iters", "1")
    assert run_rllib_example_script_experiment(small_config(), args)[TRAINING_ITERATION] == 1


def test_a_script_may_define_one_of_the_options_again() -> None:
    parser = add_rllib_example_script_args()
    parser.add_argument("--evaluation-duration", default="auto")  # as older scripts do
    assert parser.parse_args([]).evaluation_duration == "auto"
