"""RLlib's example scripts, ported with their imports changed, run as RLlib's CI runs them.

Each script in this folder runs as ``python script.py <options>`` would (``__main__``,
``sys.argv``), with stop criteria small enough for CI; each file's header says what it
changed besides imports. Where a script's promise is learning, ``--as-test`` holds it to
a scaled-down threshold here; bench/ keeps the full figure where it matters.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.runners.rllib_examples.example_scripts import run_script


def test_custom_gym_env_learns_the_corridor(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_script(
        "custom_gym_env.py",
        "--no-tune",
        "--as-test",
        "--corridor-length",
        "5",
        "--stop-reward",
        "0.5",
        "--stop-iters",
        "10",
        monkeypatch=monkeypatch,
    )
    assert "`env_runners/episode_return_mean` of 0.5 reached! ok" in capsys.readouterr().out


def test_custom_evaluation_runs_three_rounds_per_iteration(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The script merges its runners' metrics with RLlib's deprecated merge_and_log_n_dicts.
    with pytest.warns(DeprecationWarning, match="merge_and_log_n_dicts"):
        run_script(
            "custom_evaluation.py", "--no-tune", "--stop-iters", "2", monkeypatch=monkeypatch
        )
    out = capsys.readouterr().out
    # algorithm.iteration counts finished iterations, as RLlib's (Tune's Trainable) does.
    for iteration in (0, 1):
        for round_ in range(3):
            assert f"Training iteration {iteration} -> evaluation round {round_}" in out
    assert "R(eval)=" in out


@pytest.mark.parametrize(
    "options",
    [
        ["--evaluation-parallel-to-training", "--evaluation-duration", "auto"],
        ["--evaluation-duration", "13", "--evaluation-duration-unit", "episodes"],
        ["--evaluation-parallel-to-training", "--evaluation-duration", "511"],
    ],
    ids=["parallel-auto", "13-episodes", "parallel-511-timesteps"],
)
def test_evaluation_parallel_to_training_runs_the_duration_asked(
    options: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_script(
        "evaluation_parallel_to_training.py",
        "--no-tune",
        "--stop-iters",
        "2",
        # Both iterations always run: the script seeds nothing, and an untrained
        # deterministic policy that balances the pole for all 500 steps (it happens) met
        # the default stop reward in iteration 1, which printed one line of the two.
        "--stop-reward",
        "1e9",
        *options,
        monkeypatch=monkeypatch,
    )
    out = capsys.readouterr().out
    if "13" in options:
        assert out.count("Number of run evaluation episodes: 13 (ok)!") == 2
    elif "511" in options:
        assert out.count("Number of run evaluation timesteps:") == 2


def test_curriculum_learning_moves_to_harder_maps(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The script calls RLlib's deprecated foreach_worker: it works, and warns.
    with pytest.warns(DeprecationWarning, match="foreach_worker"):
        run_script(
            "curriculum_learning.py",
            "--no-tune",
            "--stop-iters",
            "15",
            "--upgrade-task-threshold",
            "0.9",
            monkeypatch=monkeypatch,
        )
    assert "Switching task/map on all EnvRunners to #1" in capsys.readouterr().out


@pytest.mark.parametrize("agents", [[], ["--num-agents", "2"]], ids=["one-agent", "two-agents"])
def test_crashing_and_stalling_env_trains_through_restarts(
    agents: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_script(
        "crashing_and_stalling_env.py",
        "--no-tune",
        *agents,
        # A failed sub-env restarts in place (the script's fast mode): a whole runner's
        # restart waits delay_between_env_runner_restarts_s (RLlib's 60 s) first.
        "--restart-failed-envs",
        "--num-env-runners",
        "2",
        "--stop-iters",
        "2",
        monkeypatch=monkeypatch,
    )
    assert "iter=1" in capsys.readouterr().out


def test_agents_act_in_sequence_trains_two_policies_in_turns(
    monkeypatch: pytest.MonkeyPatch, results: list[Any]
) -> None:
    run_script(
        "agents_act_in_sequence.py", "--no-tune", "--stop-iters", "2", monkeypatch=monkeypatch
    )
    runners = results[0]["env_runners"]
    assert set(runners["module_episode_returns_mean"]) == {"player1", "player2"}
    assert set(results[0]["learners"]) >= {"player1", "player2"}


@pytest.mark.parametrize("options", [[], ["--sheldon-cooper-mode"]], ids=["3-moves", "5-moves"])
def test_agents_act_simultaneously_with_one_hot_observations(
    options: list[str], monkeypatch: pytest.MonkeyPatch, results: list[Any]
) -> None:
    run_script(
        "agents_act_simultaneously.py",
        "--no-tune",
        "--stop-iters",
        "1",
        *options,
        monkeypatch=monkeypatch,
    )
    runners = results[0]["env_runners"]
    assert runners["episode_len_mean"] == 10.0
    assert runners["episode_return_mean"] == 0.0  # zero-sum: the players' returns cancel


def test_async_gym_env_vectorization_steps_sub_envs_in_processes(
    monkeypatch: pytest.MonkeyPatch, results: list[Any]
) -> None:
    run_script(
        "async_gym_env_vectorization.py",
        "--no-tune",
        "--num-envs-per-env-runner",
        "2",
        "--stop-iters",
        "1",
        monkeypatch=monkeypatch,
    )
    assert results[0]["env_runners"]["num_env_steps_sampled"] > 0


def test_env_rendering_and_recording_logs_videos_as_arrays(
    monkeypatch: pytest.MonkeyPatch, results: list[Any]
) -> None:
    run_script(
        "env_rendering_and_recording.py",
        "--no-tune",
        "--enable-new-api-stack",
        "--env",
        "CartPole-v1",
        "--stop-iters",
        "1",
        monkeypatch=monkeypatch,
    )
    runners = results[0]["env_runners"]
    for key in ("episode_videos_best", "episode_videos_worst"):
        videos = runners[key]
        assert videos, key
        for video in videos:
            assert video.ndim == 5
            assert video.shape[0] == 1
            assert video.shape[2:] == (3, 64, 96)


@pytest.mark.parametrize("agents", ["0", "2"])
def test_custom_env_render_method_records_its_drawings(
    agents: str, monkeypatch: pytest.MonkeyPatch, results: list[Any]
) -> None:
    run_script(
        "custom_env_render_method.py",
        "--no-tune",
        "--num-agents",
        agents,
        "--stop-iters",
        "1",
        monkeypatch=monkeypatch,
    )
    assert results[0]["env_runners"]["episode_videos_best"]
