"""Columnar sampling (issue 31): with nobody listening per step, the same episodes and hooks.

A runner whose bus has no ``on_episode_step`` subscriber keeps its steps as arrays and does
per-sub-env work only where an episode starts or ends. Each test samples the same seeds
twice, once so and once with an ``on_episode_step`` handler that does nothing (the per-step
loop), and asks for the very same hooks, in the same order, and the same episodes.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hookbus.events import EpisodeStep
from hookbus.kernel import Bus, Control, Recorder, check_lifecycle, read_recording, replay
from hookbus.metrics import MetricsLogger
from hookbus.runners import EnvRunner, PPOConfig

sys.path.insert(0, str(Path(__file__).parents[1]))  # so worker processes import the helpers too
import columnar_helpers as helpers
import vector_helpers

BUDGETS: list[dict[str, Any]] = [
    {"num_timesteps": 40},
    {"num_timesteps": 97},  # the episodes under way go on across calls, as chunks
    {"num_episodes": 4},
    {"num_timesteps": 25, "exact": True},  # the last vector step is cut short
    {"num_episodes": 3, "exact": True},
    {"num_timesteps": 60},
    {"num_timesteps": 30, "force_reset": True},
]


def make_runner(callback: Any, mode: str, env: Any = "CartPole-v1", num_envs: int = 4) -> EnvRunner:
    config = PPOConfig().environment(env).debugging(seed=7)
    config.env_runners(num_envs_per_env_runner=num_envs, gym_env_vectorize_mode=mode)
    return EnvRunner(config, bus=Bus(callback))


async def sample_all(runner: EnvRunner, trace: helpers.Trace) -> list[list[Any]]:
    out = []
    try:
        for budget in BUDGETS:
            chunks = await runner.asample(random_actions=True, **budget)
            out.append(helpers.chunk_digest(chunks, trace.ids))
    finally:
        runner.stop()
    return out


def assert_same(columnar: Any, per_step: Any) -> None:
    assert len(columnar) == len(per_step)
    for got, want in zip(columnar, per_step, strict=True):
        assert got == want


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["SYNC", "VECTOR_ENTRY_POINT"])
async def test_columns_give_the_per_step_hooks_and_episodes(mode: str) -> None:
    columnar, per_step = helpers.Trace(), helpers.TracePerStep()
    got = await sample_all(make_runner(columnar, mode, num_envs=5), columnar)
    want = await sample_all(make_runner(per_step, mode, num_envs=5), per_step)
    assert_same(got, want)
    assert_same(columnar.trace, per_step.trace)
    hooks = [entry[0] for entry in columnar.trace]
    assert hooks.count("end") >= 10
    assert hooks.count("end") == hooks.count("postprocess")


@pytest.mark.anyio
async def test_infos_rewritten_rewards_and_custom_data_match() -> None:
    columnar, per_step = helpers.Trace(), helpers.TracePerStep()
    got = await sample_all(make_runner(columnar, "SYNC", helpers.InfoEnv), columnar)
    want = await sample_all(make_runner(per_step, "SYNC", helpers.InfoEnv), per_step)
    assert_same(got, want)
    assert_same(columnar.trace, per_step.trace)
    ended = [entry for entry in columnar.trace if entry[0] == "end"]
    assert any(entry[5] for entry in ended)
    assert any(entry[6] for entry in ended)
    infos = [info for chunk in got[0] for info in chunk[-1]]
    assert {"reset": True} in infos
    assert any("even" in info for info in infos)
    assert any(info.get("why") == "truncated" for info in infos)


@pytest.mark.anyio
async def test_asynchronous_sub_envs_sample_column_by_column_too() -> None:
    columnar, per_step = helpers.Trace(), helpers.TracePerStep()
    got = await sample_all(make_runner(columnar, "ASYNC", num_envs=2), columnar)
    want = await sample_all(make_runner(per_step, "ASYNC", num_envs=2), per_step)
    assert_same(got, want)
    assert_same(columnar.trace, per_step.trace)


class SubscribesLater(helpers.Trace):
    """``Trace`` that subscribes a per-step handler at a chosen episode end."""

    def __init__(self) -> None:
        super().__init__()
        self.bus: Bus | None = None
        self.ends, self.armed_at = 0, -1
        self.steps: list[tuple[int, int]] = []

    def count_step(self, *, event: Any, episode: Any, **kwargs: Any) -> None:
        self.steps.append((event.env_index, len(episode)))

    def on_episode_end(self, **kwargs: Any) -> None:
        super().on_episode_end(**kwargs)
        self.ends += 1
        if self.ends == self.armed_at and self.bus is not None:
            self.bus.subscribe(EpisodeStep, self.count_step)


@pytest.mark.anyio
async def test_a_step_subscriber_added_between_or_during_calls_is_served() -> None:
    per_step = helpers.TracePerStep()
    want = await sample_all(make_runner(per_step, "VECTOR_ENTRY_POINT"), per_step)
    columnar = SubscribesLater()
    runner = make_runner(columnar, "VECTOR_ENTRY_POINT")
    columnar.bus = runner.bus
    got = []
    try:
        for k, budget in enumerate(BUDGETS):
            if k == 2:  # subscribe during this call, at its second episode end
                columnar.armed_at = columnar.ends + 2
            if k == 4:  # and leave again before this one
                runner.bus.unsubscribe(EpisodeStep, columnar.count_step)
            chunks = await runner.asample(random_actions=True, **budget)
            got.append(helpers.chunk_digest(chunks, columnar.ids))
    finally:
        runner.stop()
    assert_same(got, want)
    assert_same(columnar.trace, per_step.trace)
    assert columnar.steps  # the subscriber saw the steps from where it subscribed on


@pytest.mark.anyio
async def test_a_recording_of_the_columns_replays_to_the_same_metrics(tmp_path: Path) -> None:
    path = tmp_path / "run.msgpack"
    hooks = ["on_episode_created", "on_episode_start", "on_episode_end", "on_sample_end"]
    live = helpers.EndMetrics()
    async with Bus([Recorder(path, hooks=hooks), live]) as bus:
        config = PPOConfig().environment("CartPole-v1").debugging(seed=3)
        config.env_runners(num_envs_per_env_runner=6, gym_env_vectorize_mode="VECTOR_ENTRY_POINT")
        runner = EnvRunner(config, bus=bus)
        try:
            for budget in BUDGETS:
                await runner.asample(random_actions=True, **budget)
        finally:
            runner.stop()
    summary = check_lifecycle(read_recording(path), hooks=hooks)
    assert summary.episodes >= 10
    replayed = MetricsLogger()
    await replay(path, [helpers.EndMetrics()], metrics_logger=replayed)
    for key in ("ended", "terminated", "by_index"):
        assert replayed.peek(key) == runner.metrics.peek(key)


@pytest.mark.parametrize("backend", ["process", "ray"])
def test_remote_runners_sample_the_same_episodes(
    backend: str, request: pytest.FixtureRequest
) -> None:
    if backend == "ray":
        request.getfixturevalue("ray_cluster")
    results = []
    for callback in (helpers.EndMetrics, helpers.EndMetricsPerStep):
        config = (
            PPOConfig()
            .environment("CartPole-v1")
            .env_runners(
                num_env_runners=1,
                num_envs_per_env_runner=4,
                backend=backend,
                gym_env_vectorize_mode="VECTOR_ENTRY_POINT",
            )
            .callbacks(callback)
            .debugging(seed=5)
        )
        with config.build() as algo:
            group = algo.env_runner_group
            calls = [
                group.foreach_env_runner(
                    helpers.sample_digest, local_env_runner=False, kwargs={"n": n}
                )
                for n in (100, 150)
            ]
            metrics = group.foreach_env_runner(helpers.end_metrics, local_env_runner=False)
        results.append((calls, metrics))
    (got, got_metrics), (want, want_metrics) = results
    assert_same(got, want)
    assert sum(len(runner_result) for call in got for runner_result in call) > 8
    assert got_metrics == want_metrics


@pytest.mark.parametrize("mode", ["truncate_episodes", "complete_episodes"])
def test_batch_modes_and_the_policy_sample_the_same(mode: str) -> None:
    results = []
    for trace in (helpers.Trace(), helpers.TracePerStep()):
        config = (
            PPOConfig()
            .environment("CartPole-v1")
            .env_runners(
                num_envs_per_env_runner=8,
                gym_env_vectorize_mode="VECTOR_ENTRY_POINT",
                batch_mode=mode,
            )
            .training(train_batch_size=300, minibatch_size=100, num_epochs=1)
            .callbacks(trace)
            .debugging(seed=2)
        )
        with config.build() as algo:
            runner = algo.env_runner
            calls = [helpers.chunk_digest(runner.sample(), trace.ids) for _ in range(2)]
            algo.train()  # the policy changes: the next samples act on new weights
            calls.append(helpers.chunk_digest(runner.sample(), trace.ids))
            result = algo.train()["env_runners"]
            results.append((calls, trace.trace, result, runner.module.get_state()))
    (got, got_trace, got_result, got_weights), (want, want_trace, want_result, want_weights) = (
        results
    )
    assert_same(got, want)
    assert_same(got_trace, want_trace)
    for name, weights in got_weights.items():  # the learner trained on the same numbers
        np.testing.assert_array_equal(weights, want_weights[name])
    for key in ("episode_return_mean", "episode_len_mean", "num_episodes"):
        assert got_result[key] == want_result[key]
    if mode == "complete_episodes":
        assert all(chunk[5] or chunk[4] for call in got for chunk in call)
    assert np.isfinite(got_result["episode_return_mean"])


@pytest.mark.anyio
async def test_continuous_actions_and_float_rewards_match() -> None:
    columnar, per_step = helpers.Trace(), helpers.TracePerStep()
    got = await sample_all(make_runner(columnar, "SYNC", "Pendulum-v1", num_envs=3), columnar)
    want = await sample_all(make_runner(per_step, "SYNC", "Pendulum-v1", num_envs=3), per_step)
    assert_same(got, want)
    assert_same(columnar.trace, per_step.trace)
    actions = got[0][0][-3]
    assert isinstance(actions[0], list)  # one row per step: the Box action itself
    assert len(actions[0]) == 1


@pytest.mark.anyio
async def test_a_vector_env_made_anew_after_a_failure_ends_the_same_episodes() -> None:
    results = []
    for trace in (helpers.Trace(), helpers.TracePerStep()):
        vector_helpers.FlakyVector.made = 0
        config = PPOConfig().environment(vector_helpers.flaky_vector).debugging(seed=1)
        config.env_runners(num_envs_per_env_runner=3, gym_env_vectorize_mode="VECTOR_ENTRY_POINT")
        config.fault_tolerance(restart_failed_sub_environments=True)
        runner = EnvRunner(config, bus=Bus(trace))
        try:
            chunks = await runner.asample(num_timesteps=60, random_actions=True)
        finally:
            runner.stop()
        results.append((helpers.chunk_digest(chunks, trace.ids), trace.trace))
    (got, got_trace), (want, want_trace) = results
    # The env made anew resets unseeded: only what came before the failure repeats.
    failed = [chunk for chunk in got if "env_step_failure" in chunk[-1][-1]]
    assert [chunk[1] for chunk in failed] == [0, 1, 2]
    assert failed == [chunk for chunk in want if "env_step_failure" in chunk[-1][-1]]
    numbers = {chunk[0] for chunk in failed}
    cut = 1 + max(
        k for k, entry in enumerate(got_trace) if entry[0] == "postprocess" and entry[1] in numbers
    )
    assert_same(got_trace[:cut], want_trace[:cut])


@pytest.mark.anyio
async def test_episodes_a_handler_ended_early_play_out_the_same_in_the_next_call() -> None:
    def end_at_four(*, episode: Any, **kwargs: Any) -> Any:
        return Control(end_episode=True) if len(episode) >= 4 else None

    def nothing(**kwargs: Any) -> None:
        pass

    results = []
    for then in (None, nothing):  # the second call column by column, or step by step
        trace = helpers.Trace()
        runner = make_runner(trace, "VECTOR_ENTRY_POINT", num_envs=6)
        digests = []
        try:
            runner.bus.subscribe(EpisodeStep, end_at_four)
            digests.append(helpers.chunk_digest(await runner.asample(num_timesteps=30), trace.ids))
            runner.bus.unsubscribe(EpisodeStep, end_at_four)
            if then is not None:
                runner.bus.subscribe(EpisodeStep, then)
            for budget in ({"num_timesteps": 200}, {"num_episodes": 5, "exact": True}):
                chunks = await runner.asample(random_actions=True, **budget)
                digests.append(helpers.chunk_digest(chunks, trace.ids))
        finally:
            runner.stop()
        results.append((digests, trace.trace))
    (got, got_trace), (want, want_trace) = results
    assert_same(got, want)
    assert_same(got_trace, want_trace)
    assert any(chunk[5] and chunk[2] == 4 for chunk in got[0])  # ended early, truncated
