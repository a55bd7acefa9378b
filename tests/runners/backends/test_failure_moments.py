"""A worker killed at any moment of a run: the batch stays full and the counts add up.

Each case kills runner 1's worker (SIGKILL) at one moment (while it starts, in ``build()``,
or in an iteration), deterministically: the worker honours a fault plan
(``HOOKBUS_FAULT_PLAN``: die on receiving its nth request of a kind, or after serving it,
with half the reply sent), or the env kills its process at a given step.
Every iteration's learner must get at least ``train_batch_size`` env steps, and the
result's counts must be those of what it got.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from hookbus.runners import DQNConfig, PPOConfig

sys.path.insert(0, str(Path(__file__).parents[1]))  # so workers import the helpers too
import process_helpers

ITERATIONS = 3

# moment -> the kills (runner, request, at, nth) of the fault plan; "mid-sample" is the env's.
MOMENTS: dict[str, list[tuple[int, str, str, int]]] = {
    # build: runner 1's worker has started (hookbus imported) and dies on its first request
    "start": [(1, "init", "receipt", 1)],
    # build: runner 1's worker built its runner and dies before making the env
    "making-env": [(1, "setup", "receipt", 1)],
    # build: runner 1 made its env and dies with half of the reply sent
    "env-made": [(1, "setup", "reply", 1)],
    # iteration 1 ends with the weights' sync: runner 1 dies loading them
    "weight-sync": [(1, "set_weights", "receipt", 1)],
    # iteration 2's sample request reaches a dead worker: nothing of it is done
    "request": [(1, "sample", "receipt", 2)],
    # iteration 1: runner 1's env kills its process at its 30th step
    "mid-sample": [],
    # iteration 2: runner 1 sampled, and dies with half of the episodes' reply sent
    "episodes": [(1, "sample", "reply", 2)],
    # iteration 2: runner 1 returned its episodes and dies when asked for their metrics
    "metrics": [(1, "get_metrics", "receipt", 2)],
    # iteration 2: runner 1 dies at its request, runner 2 when asked for runner 1's share:
    # no runner is left while the failures are settled, and both are restarted then
    "both": [(1, "sample", "receipt", 2), (2, "sample", "receipt", 3)],
    # iteration 1: runner 1 dies at its request; iteration 2: its new worker dies loading the
    # weights it is restarted with (a failed restart); iteration 3 restarts it for good
    "restart": [(1, "sample", "receipt", 1), (1, "set_weights", "receipt", 1)],
}


def plan(kills: list[tuple[int, str, str, int]], markers: Path) -> str:
    return json.dumps(
        [
            {"runner": r, "request": q, "at": at, "nth": n, "marker": str(markers / f"{i}")}
            for i, (r, q, at, n) in enumerate(kills)
        ]
    )


def killed_at(
    moment: str, config: PPOConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> PPOConfig:
    """Return ``config`` with workers set to die at ``moment``, restarted at once."""
    monkeypatch.setenv("HOOKBUS_FAULT_PLAN", plan(MOMENTS[moment], tmp_path))
    if moment == "mid-sample":
        env_config = {"fail_on": [1], "how": "kill", "at_step": 30, "marker_dir": str(tmp_path)}
        config = config.environment(process_helpers.Faulty, env_config=env_config)
    return config.fault_tolerance(delay_between_env_runner_restarts_s=0).callbacks(
        [process_helpers.LearnerBatches(), process_helpers.Recreations()]
    )


def train_and_check(config: PPOConfig, moment: str) -> None:
    """Train ``ITERATIONS`` iterations; check each one's batch, counts and restarts."""
    with config.build() as algo:
        results = [algo.train() for _ in range(ITERATIONS)]
        assert algo.env_runner_group.healthy_env_runner_ids() == [1, 2]
        batches, recreations = algo.bus.callbacks[:2]
    kills = MOMENTS[moment] or [(1, "env", "step", 30)]
    steps_lifetime = episodes_lifetime = 0
    for i, result in enumerate(results):
        runners = result["env_runners"]
        steps, episodes = batches.steps[i], batches.episodes[i]  # type: ignore[attr-defined]
        assert steps >= config.train_batch_size, f"iteration {i + 1}: a short batch"
        steps_lifetime += steps
        episodes_lifetime += episodes
        counts = (
            runners["num_env_steps_sampled"],
            runners.get("num_episodes", 0),
            result["num_env_steps_sampled_lifetime"],
            runners["num_env_steps_sampled_lifetime"],
            runners["num_episodes_lifetime"],
        )
        assert counts == (steps, episodes, steps_lifetime, steps_lifetime, episodes_lifetime), (
            f"iteration {i + 1}"
        )
    # Every runner killed is back, announced once, with the learner's weights.
    restarted = sorted(i for indices, _ in recreations.calls for i in indices)  # type: ignore[attr-defined]
    assert restarted == sorted({runner for runner, *_ in kills})
    assert all(recreations.weights_match)  # type: ignore[attr-defined]
    assert results[-1]["env_runner_group"] == {
        "num_healthy_env_runners": 2,
        "num_remote_env_runner_restarts": len(kills),  # a restart per kill, failed ones too
    }


@pytest.mark.parametrize("moment", list(MOMENTS))
def test_a_worker_killed_at_any_moment_leaves_every_batch_full(
    small_ppo: PPOConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moment: str
) -> None:
    config = small_ppo.env_runners(num_env_runners=2, backend="process")
    train_and_check(killed_at(moment, config, tmp_path, monkeypatch), moment)
    assert process_helpers.worker_processes(os.getpid()) == []


def test_dqn_counts_the_rounds_of_a_runner_killed_between_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DQN samples in rounds, syncing the weights after each: runner 1 dies at its 3rd sync,
    after handing out 3 rounds whose counts its metrics had not reported yet."""
    monkeypatch.setenv("HOOKBUS_FAULT_PLAN", plan([(1, "set_weights", "receipt", 3)], tmp_path))
    config = (
        DQNConfig()
        .environment("CartPole-v1")
        .env_runners(num_env_runners=2, backend="process")
        .training(num_steps_sampled_before_learning_starts=0, train_batch_size=16)
        .reporting(min_sample_timesteps_per_iteration=64)
        .fault_tolerance(delay_between_env_runner_restarts_s=0)
        .debugging(seed=0)
    )
    with config.build() as algo:
        results = [algo.train() for _ in range(ITERATIONS)]
    lifetime = 0
    for i, result in enumerate(results):
        runners = result["env_runners"]
        steps = result["num_env_steps_sampled_lifetime"] - lifetime  # into the replay buffer
        lifetime += steps
        assert steps >= 64, f"iteration {i + 1}: short"
        assert runners["num_env_steps_sampled"] == steps, f"iteration {i + 1}"
        assert runners["num_env_steps_sampled_lifetime"] == lifetime
    assert results[0]["env_runner_group"]["num_healthy_env_runners"] == 1
    assert results[-1]["env_runner_group"] == {
        "num_healthy_env_runners": 2,
        "num_remote_env_runner_restarts": 1,
    }
    assert process_helpers.worker_processes(os.getpid()) == []


@pytest.mark.usefixtures("ray_cluster")
@pytest.mark.parametrize("moment", list(MOMENTS))
def test_an_actor_killed_at_any_moment_leaves_every_batch_full(
    small_ppo: PPOConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moment: str
) -> None:
    config = small_ppo.env_runners(num_env_runners=2, backend="ray", num_cpus_per_env_runner=0.5)
    train_and_check(killed_at(moment, config, tmp_path, monkeypatch), moment)
    import ray

    deadline = time.monotonic() + 15
    while ray.available_resources().get("CPU") != 2.0:  # every actor ended
        assert time.monotonic() < deadline, "an actor outlived stop()"
        time.sleep(0.1)


# --- evaluation rounds in env steps -----------------------------------------------------------

# moment -> kills of evaluation runners (training samples on the local runner alone)
EVALUATION_MOMENTS: dict[str, list[tuple[int, str, str, int]]] = {
    # build: evaluation runner 1 dies while starting (before making its env)
    "start": [(1, "setup", "receipt", 1)],
    # round 1 starts with the weights' sync: runner 1 dies loading them
    "weight-sync": [(1, "set_weights", "receipt", 1)],
    # round 1: runner 1's request reaches a dead worker
    "request": [(1, "sample_and_get_metrics", "receipt", 1)],
    # round 1: runner 1 sampled its share, and dies with half of the reply sent
    "reply": [(1, "sample_and_get_metrics", "reply", 1)],
    # round 2: runner 1 dies at its request, runner 2 when asked for runner 1's share
    "both": [
        (1, "sample_and_get_metrics", "receipt", 2),
        (2, "sample_and_get_metrics", "receipt", 3),
    ],
}

EVALUATION_STEPS = 150


def evaluating_killed_at(
    moment: str, config: PPOConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> PPOConfig:
    monkeypatch.setenv("HOOKBUS_FAULT_PLAN", plan(EVALUATION_MOMENTS[moment], tmp_path))
    return (
        config.evaluation(
            evaluation_interval=1,
            evaluation_num_env_runners=2,
            evaluation_duration=EVALUATION_STEPS,
            evaluation_duration_unit="timesteps",
        )
        .fault_tolerance(delay_between_env_runner_restarts_s=0)
        .callbacks(process_helpers.Recreations())
    )


def evaluate_and_check(config: PPOConfig, moment: str) -> None:
    """Train ``ITERATIONS`` iterations, each with a round: every round gets its budget."""
    with config.build() as algo:
        results = [algo.train() for _ in range(ITERATIONS)]
        group = algo.eval_env_runner_group
        assert group is not None
        assert group.healthy_env_runner_ids() == [1, 2]
        recreations = algo.bus.callbacks[0]
    for i, result in enumerate(results):
        runners = result["evaluation"]["env_runners"]
        assert runners["num_env_steps_sampled"] == EVALUATION_STEPS, f"round {i + 1}"
        assert runners["num_env_steps_sampled_lifetime"] == EVALUATION_STEPS * (i + 1)
    restarted = sorted(i for indices, _ in recreations.calls for i in indices)  # type: ignore[attr-defined]
    assert restarted == sorted({runner for runner, *_ in EVALUATION_MOMENTS[moment]})
    assert {is_evaluation for _, is_evaluation in recreations.calls} == {True}  # type: ignore[attr-defined]


@pytest.mark.parametrize("moment", list(EVALUATION_MOMENTS))
def test_evaluation_rounds_in_env_steps_get_their_budget_whatever_the_moment(
    small_ppo: PPOConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moment: str
) -> None:
    config = small_ppo.env_runners(backend="process")
    evaluate_and_check(evaluating_killed_at(moment, config, tmp_path, monkeypatch), moment)
    assert process_helpers.worker_processes(os.getpid()) == []


@pytest.mark.usefixtures("ray_cluster")
def test_evaluation_actors_all_killed_in_a_round_are_restarted_for_its_budget(
    small_ppo: PPOConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = small_ppo.env_runners(backend="ray", num_cpus_per_env_runner=0.5)
    evaluate_and_check(evaluating_killed_at("both", config, tmp_path, monkeypatch), "both")
