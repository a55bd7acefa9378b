"""Evaluation during training: settings, runners, exact budgets, hooks, fault tolerance."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from hookbus.events import (
    EnvironmentCreated,
    EnvRunnersRecreated,
    EpisodeCreated,
    EpisodeEnd,
    EvaluateEnd,
    EvaluateStart,
)
from hookbus.kernel import Bus, Callback, ConfigError
from hookbus.runners import EnvRunner, PPOConfig, RemoteError

sys.path.insert(0, str(Path(__file__).parents[1]))  # so worker processes import the helpers too
import process_helpers

BACKENDS = ["inline", "process"]


@pytest.fixture
def evaluating(small_ppo: PPOConfig) -> PPOConfig:
    """Small PPO that evaluates 10 episodes after every iteration on 3 evaluation runners."""
    return small_ppo.evaluation(
        evaluation_interval=1, evaluation_duration=10, evaluation_num_env_runners=3
    )


def runner_stats(result: dict[str, Any]) -> dict[str, Any]:
    stats: dict[str, Any] = result["evaluation"]["env_runners"]
    return stats


# --- settings -------------------------------------------------------------------------------


def test_defaults_are_rllibs() -> None:
    config = PPOConfig()
    assert config.evaluation_interval is None
    assert config.evaluation_duration == 10
    assert config.evaluation_duration_unit == "episodes"
    assert config.evaluation_sample_timeout_s == 120.0
    assert config.evaluation_parallel_to_training is False
    assert config.evaluation_config is None
    assert config.evaluation_num_env_runners == 0
    assert config.custom_evaluation_function is None
    assert config.enable_async_evaluation is False
    assert config.restart_failed_env_runners is True
    assert config.ignore_env_runner_failures is False
    assert config.max_num_env_runner_restarts == 1000
    assert config.delay_between_env_runner_restarts_s == 60.0


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"evaluation_interval": -1}, r"evaluation_interval must be an int >= 0, got -1"),
        ({"evaluation_duration": 0}, r"evaluation_duration must be an int >= 1 or 'auto'"),
        ({"evaluation_duration": "auto"}, r"'auto' needs evaluation_parallel_to_training=True"),
        ({"evaluation_duration_unit": "steps"}, r"one of 'episodes', 'timesteps', got 'steps'"),
        ({"evaluation_sample_timeout_s": 0}, r"evaluation_sample_timeout_s must be a number > 0"),
        (
            {"evaluation_num_env_runners": -2},
            r"evaluation_num_env_runners must be an int in \[0, 1024\]",
        ),
        ({"evaluation_config": {"explor": False}}, r"override 'explor' \(did you mean 'explore'"),
        (
            {"evaluation_config": {"num_env_runners": 2}},
            r"'num_env_runners' \(set evaluation_num_env_runners instead\)",
        ),
        ({"evaluation_config": {"explore": "no"}}, r"explore must be True or False, got 'no'"),
        ({"evaluation_config": [("explore", False)]}, r"evaluation_config must be None or a dict"),
        ({"custom_evaluation_function": 3}, r"custom_evaluation_function must be callable"),
    ],
)
def test_bad_evaluation_settings_are_named(
    small_ppo: PPOConfig, settings: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        small_ppo.evaluation(**settings).build()


def test_bad_fault_tolerance_settings_are_named(small_ppo: PPOConfig) -> None:
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'restart_failed'"):
        small_ppo.fault_tolerance(restart_failed=True)  # type: ignore[call-arg]
    with pytest.raises(ConfigError, match=r"delay_between_env_runner_restarts_s must be a number"):
        small_ppo.fault_tolerance(delay_between_env_runner_restarts_s=-1).build()
    with pytest.raises(ConfigError, match=r"max_num_env_runner_restarts must be an int >= 0"):
        small_ppo.fault_tolerance(max_num_env_runner_restarts=1.5).build()


def test_evaluation_config_overrides_only_the_evaluation_copy(small_ppo: PPOConfig) -> None:
    config = small_ppo.evaluation(
        evaluation_num_env_runners=2, evaluation_config={"explore": False, "env_config": {"a": 1}}
    )
    evaluation = config.get_evaluation_config_object()
    assert (evaluation.explore, evaluation.env_config, evaluation.in_evaluation) == (
        False,
        {"a": 1},
        True,
    )
    assert evaluation.num_env_runners == 2
    assert (config.explore, config.env_config, config.in_evaluation) == (True, {}, False)


# --- exact sampling in an EnvRunner ---------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("num_envs", [1, 3])
async def test_exact_sampling_meets_budgets_exactly(num_envs: int) -> None:
    config = PPOConfig().environment("CartPole-v1").debugging(seed=0)
    config.env_runners(num_envs_per_env_runner=num_envs)
    bus = Bus()
    created: list[Any] = []
    ended: list[Any] = []
    bus.subscribe(EpisodeCreated, lambda event, **kw: created.append(event))
    bus.subscribe(EpisodeEnd, lambda event, **kw: ended.append(event))
    runner = EnvRunner(config, bus=bus)
    for budget in (1, 2, 5):
        created.clear()
        ended.clear()
        summary = await runner.sample_and_get_metrics(
            num_episodes=budget, force_reset=True, exact=True
        )
        assert summary.num_episodes == budget == len(created) == len(ended)
    await runner.asample(num_timesteps=10)  # ongoing episodes, which a forced reset drops
    for budget in (1, 7, 101):
        chunks = await runner.asample(num_timesteps=budget, force_reset=True, exact=True)
        assert sum(map(len, chunks)) == budget
        chunks = await runner.asample(num_timesteps=budget, exact=True)  # goes on, or resets
        assert sum(map(len, chunks)) == budget


# --- when rounds run, and what they report --------------------------------------------------


class CountRounds(Callback):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, int]] = []

    def on_evaluate_start(self, *, algorithm: Any, event: Any, **kwargs: Any) -> None:
        self.calls.append(("start", event.training_iteration))

    def on_evaluate_end(self, *, evaluation_metrics: dict[str, Any], **kwargs: Any) -> None:
        self.calls.append(("end", evaluation_metrics["env_runners"]["num_episodes"]))


def test_evaluation_off_builds_nothing(small_ppo: PPOConfig) -> None:
    with small_ppo.callbacks(CountRounds()).build() as algo:
        result = algo.train()
        assert algo.eval_env_runner_group is None
        assert algo.bus.callbacks[0].calls == []  # type: ignore[attr-defined]
    assert "evaluation" not in result


def test_every_nth_iteration_evaluates_and_later_results_carry_it(small_ppo: PPOConfig) -> None:
    config = small_ppo.evaluation(evaluation_interval=2, evaluation_duration=3)
    counter = CountRounds()
    with config.callbacks(counter).build() as algo:
        results = [algo.train() for _ in range(4)]
    assert counter.calls == [("start", 1), ("end", 3), ("start", 3), ("end", 3)]
    assert "evaluation" not in results[0]
    assert runner_stats(results[1])["num_episodes"] == 3
    assert results[2]["evaluation"] == results[1]["evaluation"]  # the latest round's
    assert runner_stats(results[3])["num_episodes_lifetime"] == 6
    # Evaluation without evaluation runners of its own: the local evaluation runner.
    assert results[1]["evaluation"]["num_healthy_workers"] == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_budgets_are_exact_and_spread_as_rllib_does(evaluating: PPOConfig, backend: str) -> None:
    config = evaluating.env_runners(backend=backend, num_envs_per_env_runner=2).callbacks(
        process_helpers.EndsBySource()
    )
    with config.build() as algo:
        result = algo.train()
        ends = dict(algo.bus.callbacks[0].ends)  # type: ignore[attr-defined]
    stats = runner_stats(result)
    assert stats["num_episodes"] == 10
    # 10 episodes over 3 runners: the first 10 % 3 runners run one more (RLlib's spread).
    assert {k: v for k, v in ends.items() if k.startswith("eval")} == {
        "eval_env_runner:1": 4,
        "eval_env_runner:2": 3,
        "eval_env_runner:3": 3,
    }
    assert result["evaluation"]["num_healthy_workers"] == 3
    assert result["evaluation"]["num_remote_worker_restarts"] == 0


@pytest.mark.parametrize("pulling", [False, True], ids=["sync", "async"])
def test_timestep_budgets_are_exact(evaluating: PPOConfig, pulling: bool) -> None:
    config = evaluating.env_runners(num_envs_per_env_runner=2).evaluation(
        evaluation_duration=101,
        evaluation_duration_unit="timesteps",
        enable_async_evaluation=pulling,
    )
    with config.build() as algo:
        result = algo.train()
    assert runner_stats(result)["num_env_steps_sampled"] == 101


def test_async_evaluation_episode_budget_is_exact(evaluating: PPOConfig) -> None:
    config = evaluating.env_runners(num_envs_per_env_runner=3).evaluation(
        evaluation_duration=11, enable_async_evaluation=True
    )
    with config.build() as algo:
        results = [algo.train() for _ in range(2)]
    assert [runner_stats(r)["num_episodes"] for r in results] == [11, 11]
    assert runner_stats(results[1])["num_episodes_lifetime"] == 22


def test_evaluation_episodes_never_mix_into_training(evaluating: PPOConfig) -> None:
    counter = process_helpers.EndsBySource()
    with evaluating.callbacks(counter).build() as algo:
        first = algo.train()
        result = algo.train()
    training_ends = sum(n for k, n in counter.ends.items() if k.startswith("env_runner"))
    assert result["env_runners"]["num_episodes_lifetime"] == training_ends
    steps = first["env_runners"]["num_env_steps_sampled"]
    steps += result["env_runners"]["num_env_steps_sampled"]
    assert result["num_env_steps_sampled_lifetime"] == steps
    assert runner_stats(result)["num_episodes_lifetime"] == 20


class SeesEvaluationRunners(Callback):
    def __init__(self) -> None:
        super().__init__()
        self.created: list[Any] = []
        self.sources: set[str] = set()

    def on_environment_created(self, *, event: Any, env_runner: Any, **kwargs: Any) -> None:
        self.created.append((event.source, event.in_evaluation, event.env_config))
        assert env_runner.config.in_evaluation == event.in_evaluation

    def on_episode_step(self, *, event: Any, **kwargs: Any) -> None:
        self.sources.add(event.source)


def test_evaluation_runners_publish_the_same_events(small_ppo: PPOConfig) -> None:
    seen = SeesEvaluationRunners()
    config = small_ppo.evaluation(
        evaluation_interval=1,
        evaluation_duration=2,
        evaluation_num_env_runners=2,
        evaluation_config={"env_config": {"max_episode_steps": 20}},
    )
    with config.callbacks(seen).build() as algo:
        result = algo.train()
    assert ("eval_env_runner:1", True, {"max_episode_steps": 20}) in seen.created
    assert ("env_runner:0", False, {}) in seen.created
    assert {"env_runner:0", "eval_env_runner:1", "eval_env_runner:2"} <= seen.sources
    assert runner_stats(result)["episode_len_max"] <= 20  # the override reached their envs


# --- weights: sequential vs parallel --------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("parallel", [False, True], ids=["sequential", "parallel"])
def test_parallel_evaluation_uses_the_previous_iterations_weights(
    small_ppo: PPOConfig, backend: str, parallel: bool
) -> None:
    config = (
        small_ppo.env_runners(backend=backend)
        .evaluation(
            evaluation_interval=1,
            evaluation_duration=2,
            evaluation_num_env_runners=1,
            evaluation_parallel_to_training=parallel,
        )
        .callbacks(process_helpers.EvalWeights)
    )
    checksum = process_helpers.weights_checksum
    with config.build() as algo:
        for _ in range(2):
            before = checksum(algo.learner.module.get_state())
            result = algo.train()
            after = checksum(algo.learner.module.get_state())
            used = runner_stats(result)["weights_checksum"]
            assert before != after
            # Sequential: train(0->1), eval(1). Parallel: train(0->1) + eval(0).
            assert used == (before if parallel else after)


def test_parallel_evaluation_on_the_local_evaluation_runner(small_ppo: PPOConfig) -> None:
    config = small_ppo.evaluation(
        evaluation_interval=1, evaluation_duration=3, evaluation_parallel_to_training=True
    ).callbacks(process_helpers.EvalWeights)
    with config.build() as algo:
        before = process_helpers.weights_checksum(algo.learner.module.get_state())
        result = algo.train()
    assert runner_stats(result)["num_episodes"] == 3
    assert runner_stats(result)["weights_checksum"] == before


@pytest.mark.parametrize("backend", BACKENDS)
def test_auto_duration_evaluates_while_the_training_step_runs(
    small_ppo: PPOConfig, backend: str
) -> None:
    config = small_ppo.env_runners(backend=backend).evaluation(
        evaluation_interval=1,
        evaluation_num_env_runners=2,
        evaluation_parallel_to_training=True,
        evaluation_duration="auto",
        evaluation_auto_duration_min_env_steps_per_sample=30,
    )
    with config.build() as algo:
        results = [algo.train() for _ in range(3)]
    for result in results:
        # At least one unit of at least the minimum on each runner.
        assert runner_stats(result)["num_env_steps_sampled"] >= 2 * 30


# --- explore, hooks, custom evaluation ------------------------------------------------------


class ChecksGreedy(Callback):
    def __init__(self) -> None:
        super().__init__()
        self.checked = 0

    def on_episode_step(
        self, *, episode: Any, env_runner: Any, rl_module: Any, **kwargs: Any
    ) -> None:
        if env_runner.config.in_evaluation:
            obs = episode.get_observations(-2)
            assert episode.get_actions(-1) == rl_module.forward_inference(obs[None])[0]
            self.checked += 1


def test_evaluation_with_explore_false_is_greedy_and_deterministic(
    evaluating: PPOConfig,
) -> None:
    config = evaluating.evaluation(evaluation_config={"explore": False})
    evaluations = []
    for _ in range(2):
        greedy = ChecksGreedy()
        with config.callbacks(greedy).build() as algo:
            assert algo.eval_env_runner is not None
            assert algo.eval_env_runner.config.explore is False
            assert algo.env_runner.config.explore is True
            evaluations.append([algo.train()["evaluation"] for _ in range(2)])
        assert greedy.checked > 0
    assert evaluations[0] == evaluations[1]


class EditsMetrics(Callback):
    def on_evaluate_end(self, *, evaluation_metrics: dict[str, Any], **kwargs: Any) -> None:
        evaluation_metrics["env_runners"]["episode_return_mean"] = -1.0
        evaluation_metrics["checked_by"] = "EditsMetrics"


def test_manual_evaluate_fires_the_hooks_and_keeps_handler_edits(small_ppo: PPOConfig) -> None:
    counter = CountRounds()
    config = small_ppo.evaluation(evaluation_duration=4)
    with config.callbacks([counter, EditsMetrics()]).build() as algo:
        assert algo.eval_env_runner_group is None  # made on the first evaluate()
        metrics = algo.evaluate()
        result = algo.train()
    assert counter.calls == [("start", 0), ("end", 4)]
    assert metrics["checked_by"] == "EditsMetrics"
    assert metrics["env_runners"]["episode_return_mean"] == -1.0
    assert metrics["env_runners"]["num_episodes"] == 4
    assert result["evaluation"] == metrics


@pytest.mark.parametrize("backend", BACKENDS)
def test_custom_evaluation_function_adds_its_keys(small_ppo: PPOConfig, backend: str) -> None:
    config = small_ppo.env_runners(backend=backend).evaluation(
        evaluation_interval=1,
        evaluation_num_env_runners=2,
        custom_evaluation_function=process_helpers.custom_evaluation,
    )
    with config.build() as algo:
        result = algo.train()
    assert result["evaluation"]["foo"] == 1
    assert runner_stats(result)["num_env_steps_sampled"] == 100


def test_a_sync_custom_evaluation_function_works_too(small_ppo: PPOConfig) -> None:
    calls: list[Any] = []

    def count(algorithm: Any, eval_runner_group: Any) -> dict[str, Any]:
        calls.append(eval_runner_group)
        return {"rounds": len(calls)}

    config = small_ppo.evaluation(evaluation_interval=1, custom_evaluation_function=count)
    with config.build() as algo:
        algo.train()
        result = algo.train()
        assert calls == [algo.eval_env_runner_group] * 2
    assert result["evaluation"]["rounds"] == 2


@pytest.mark.anyio
@pytest.mark.parametrize("backend", BACKENDS)
async def test_aevaluate_inside_an_event_loop(evaluating: PPOConfig, backend: str) -> None:
    starts: list[Any] = []
    async with evaluating.env_runners(backend=backend).build() as algo:
        algo.bus.subscribe(EvaluateStart, lambda event, **kw: starts.append(event))
        metrics = await algo.aevaluate()
        result = await algo.atrain()
    assert runner_stats({"evaluation": metrics})["num_episodes"] == 10
    assert runner_stats(result)["num_episodes"] == 10
    assert [e.source for e in starts] == ["algorithm", "algorithm"]


# --- fault tolerance (worker processes) -----------------------------------------------------


def flaky_eval(small_ppo: PPOConfig, **env_config: Any) -> PPOConfig:
    """Evaluate 10 episodes on 3 worker processes of the Flaky env; restart at once."""
    return (
        small_ppo.environment(process_helpers.Flaky, env_config=env_config)
        .env_runners(backend="process")
        .evaluation(
            evaluation_interval=1,
            evaluation_duration=10,
            evaluation_num_env_runners=3,
            evaluation_sample_timeout_s=1.0,
        )
        .fault_tolerance(delay_between_env_runner_restarts_s=0)
    )


def test_a_hanging_evaluation_runner_does_not_stall_training(small_ppo: PPOConfig) -> None:
    """Evaluation runner 1's env hangs in every step; training goes on.

    Each round, runner 1's first unit hangs until evaluation_sample_timeout_s (1 s), its
    worker is killed and the others cover its unit; the next round restarts it first (and
    it hangs again). Measured on 2 shared cores: the 3 iterations took 1.1, 1.5 and 1.5 s
    (4.1 s; the restarts cost the 0.5 s), after 1.1 s to build.
    """
    config = flaky_eval(small_ppo, hang_on=[1]).evaluation(enable_async_evaluation=True)
    recreated: list[Any] = []
    with config.build() as algo:
        algo.bus.subscribe(EnvRunnersRecreated, lambda event, **kw: recreated.append(event))
        results = [algo.train() for _ in range(3)]
    assert [r["training_iteration"] for r in results] == [1, 2, 3]
    assert [runner_stats(r)["num_episodes"] for r in results] == [10, 10, 10]
    assert [r["evaluation"]["num_healthy_workers"] for r in results] == [2, 2, 2]
    assert [r["evaluation"]["num_remote_worker_restarts"] for r in results] == [0, 1, 2]
    assert [(e.env_runner_indices, e.is_evaluation) for e in recreated] == [([1], True)] * 2


def test_a_crashed_evaluation_runner_is_restarted(small_ppo: PPOConfig, tmp_path: Path) -> None:
    config = flaky_eval(small_ppo, crash_once_on=[2], marker_dir=str(tmp_path))
    recreated: list[Any] = []

    def on_recreated(*, env_runner_group: Any, env_runner_indices: Any, **kwargs: Any) -> None:
        recreated.append((env_runner_group, env_runner_indices, kwargs["is_evaluation"]))

    with config.build() as algo:
        algo.bus.subscribe(EnvRunnersRecreated, on_recreated)
        first = algo.train()
        second = algo.train()
        group = algo.eval_env_runner_group
    assert runner_stats(first)["num_episodes"] == 10  # runner 2's share went to the others
    assert first["evaluation"]["num_healthy_workers"] == 2
    assert recreated == [(group, [2], True)]
    assert runner_stats(second)["num_episodes"] == 10
    assert second["evaluation"]["num_healthy_workers"] == 3
    assert second["evaluation"]["num_remote_worker_restarts"] == 1


def test_without_fault_tolerance_a_crash_is_raised(small_ppo: PPOConfig, tmp_path: Path) -> None:
    config = flaky_eval(small_ppo, crash_once_on=[1], marker_dir=str(tmp_path)).fault_tolerance(
        restart_failed_env_runners=False
    )
    with config.build() as algo:
        with pytest.raises(RemoteError, match=r"env runner 1 \(worker process \d+\) died") as info:
            algo.train()
    assert "restart_failed_env_runners=True" in info.value.__notes__[-1]


def test_ignored_failures_leave_the_runner_out(small_ppo: PPOConfig, tmp_path: Path) -> None:
    config = flaky_eval(small_ppo, crash_once_on=[1], marker_dir=str(tmp_path)).fault_tolerance(
        restart_failed_env_runners=False, ignore_env_runner_failures=True
    )
    with config.build() as algo:
        results = [algo.train() for _ in range(2)]
    assert [runner_stats(r)["num_episodes"] for r in results] == [10, 10]
    assert [r["evaluation"]["num_healthy_workers"] for r in results] == [2, 2]
    assert results[1]["evaluation"]["num_remote_worker_restarts"] == 0


def test_with_every_evaluation_runner_failed_and_no_restarts_the_round_says_so(
    small_ppo: PPOConfig, tmp_path: Path
) -> None:
    config = flaky_eval(small_ppo, crash_once_on=[1, 2, 3], marker_dir=str(tmp_path))
    config = config.fault_tolerance(
        restart_failed_env_runners=False, ignore_env_runner_failures=True
    )
    with config.build() as algo:
        with pytest.raises(
            RemoteError,
            match=r"no env runner left to evaluate 10 more of 10 episodes: env runners 1, 2, 3 "
            r"failed; config.fault_tolerance\(restart_failed_env_runners=False\) restarts none",
        ):
            algo.train()


def test_evaluation_runners_can_be_processes_while_training_is_inline(
    small_ppo: PPOConfig,
) -> None:
    config = small_ppo.evaluation(
        evaluation_interval=1,
        evaluation_num_env_runners=2,
        evaluation_config={"backend": "process"},
    ).callbacks(process_helpers.WorkerSide)
    with config.build() as algo:
        result = algo.train()
        assert algo.eval_env_runner_group is not None
        assert all(r.healthy for r in algo.eval_env_runner_group.remote_env_runners)
    assert runner_stats(result)["worker_pid"] != result["env_runners"]["worker_pid"]
    assert runner_stats(result)["num_episodes"] == 10


def test_environment_created_is_published_by_restarted_runners(
    small_ppo: PPOConfig, tmp_path: Path
) -> None:
    created: list[str] = []
    config = flaky_eval(small_ppo, crash_once_on=[3], marker_dir=str(tmp_path)).evaluation(
        evaluation_duration=3
    )
    with config.build() as algo:
        algo.bus.subscribe(EnvironmentCreated, lambda event, **kw: created.append(event.source))
        ends: list[Any] = []
        algo.bus.subscribe(EvaluateEnd, lambda event, **kw: ends.append(event))
        algo.train()
        algo.train()
    assert created == ["eval_env_runner:3"]
    assert [e.evaluation_metrics["env_runners"]["num_episodes"] for e in ends] == [3, 3]
    assert np.all([e.source == "algorithm" for e in ends])


# --- the scheduler shared with training (fleet/_work.py) -------------------------------------


def test_a_failure_cancels_no_other_runners_request(small_ppo: PPOConfig, tmp_path: Path) -> None:
    """Runner 1 crashes and is not tolerated: the round raises once 2 and 3 are done.

    Their requests are not cancelled (which would end their workers): they stay healthy.
    """
    config = flaky_eval(small_ppo, crash_once_on=[1], marker_dir=str(tmp_path))
    config = config.evaluation(enable_async_evaluation=True).fault_tolerance(
        restart_failed_env_runners=False
    )
    with config.build() as algo:
        with pytest.raises(RemoteError, match=r"env runner 1 \(worker process \d+\) died"):
            algo.train()
        group = algo.eval_env_runner_group
        assert group is not None
        assert group.healthy_env_runner_ids() == [2, 3]


class BrokenWhenEvaluating(gym.Env[Any, Any]):
    """CartPole whose step() raises on evaluation runners."""

    def __init__(self, config: Any) -> None:
        self.env = gym.make("CartPole-v1")
        self.observation_space = self.env.observation_space
        self.action_space = self.env.action_space
        self.evaluating = config.in_evaluation

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> Any:
        if self.evaluating:
            raise ValueError("the evaluation env broke")
        return self.env.step(action)


@pytest.mark.parametrize("pulling", [False, True], ids=["sync", "async"])
def test_the_local_evaluation_runners_env_error_is_raised(
    small_ppo: PPOConfig, pulling: bool
) -> None:
    """As the local training runner's: it is never restarted (restarts are on by default)."""
    config = small_ppo.environment(BrokenWhenEvaluating).evaluation(
        evaluation_interval=1, enable_async_evaluation=pulling
    )
    with config.build() as algo, pytest.raises(ValueError, match="the evaluation env broke"):
        algo.train()
