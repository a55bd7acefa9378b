"""Multi-agent training end to end: RLlib's hook counts, backends, evaluation, replay."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from hookbus.kernel import (
    Callback,
    Recorder,
    check_lifecycle,
    read_recording,
    replay_into,
)
from hookbus.runners import (
    MultiAgentCartPole,
    MultiAgentEpisode,
    PPOConfig,
)

sys.path.insert(0, str(Path(__file__).parents[1]))  # so worker processes import the helpers too
import process_helpers


def two_agents(backend: str = "inline", num_env_runners: int = 0) -> PPOConfig:
    config = (
        PPOConfig()
        .environment(MultiAgentCartPole, env_config={"num_agents": 2})
        .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=process_helpers.policy_of_agent)
        .env_runners(backend=backend, num_env_runners=num_env_runners)
        .training(train_batch_size=50, minibatch_size=50, num_epochs=1)
        .debugging(seed=0)
    )
    assert isinstance(config, PPOConfig)
    return config


def test_rllib_multi_agent_episode_and_sample_counts_for_one_iteration() -> None:
    # The multi-agent half of RLlib's test_episode_and_sample_callbacks_batch_mode_
    # truncate_episodes: MultiAgentCartPole with 2 agents, policies p0 and p1.
    config = two_agents().callbacks(process_helpers.MultiAgentCounts)
    with config.build() as algo:
        callback = algo.bus.callbacks[0]
        assert isinstance(callback, process_helpers.MultiAgentCounts)
        counts = callback.counts
        assert counts["env_created"] == 1  # already before training
        result = algo.train()
        assert counts["sample"] == 1
        assert counts["start"] > 0
        assert counts["start"] in (counts["end"], counts["end"] + 1)
        assert counts["step"] == 50  # env steps, however many agents acted
        assert counts["env_created"] == 1
    runners = result["env_runners"]
    assert runners["num_env_steps_sampled"] == 50
    assert runners["num_episodes"] == counts["end"]
    assert sum(runners["num_agent_steps_sampled"].values()) > 50  # two agents act per step


@pytest.mark.parametrize("backend", ["inline", "process"])
def test_rllib_multi_agent_counts_with_complete_episodes(backend: str) -> None:
    # The multi-agent half of RLlib's test_episode_and_sample_callbacks_batch_mode_
    # complete_episodes (and the same with one worker process).
    config = two_agents(backend, num_env_runners=int(backend == "process"))
    config.env_runners(batch_mode="complete_episodes").callbacks(process_helpers.MultiAgentCounts)
    with config.build() as algo:
        result = algo.train()
    runners = result["env_runners"]
    assert runners["hook_env_created"] == 1
    assert runners["hook_start"] > 0
    assert runners["hook_start"] == runners["hook_end"]  # every episode completes
    assert runners["hook_step"] >= 50
    assert runners["hook_step"] == runners["num_env_steps_sampled"]
    assert runners["hook_sample"] == 1  # one sample() call per iteration, as RLlib's


@pytest.mark.parametrize("backend", ["inline", "process"])
def test_remote_runners_report_the_hooks_and_per_agent_results(backend: str) -> None:
    config = two_agents(backend, num_env_runners=2).callbacks(process_helpers.MultiAgentCounts)
    config.training(train_batch_size=200)
    with config.build() as algo:
        algo.train()
        result = algo.train()
    runners = result["env_runners"]
    assert 200 <= runners["num_env_steps_sampled"] <= 202
    assert runners["hook_step"] == runners["num_env_steps_sampled"]
    assert runners["hook_sample"] == 2  # one sample() per remote runner
    assert set(runners["agent_episode_returns_mean"]) == {"0", "1"}
    assert set(runners["module_episode_returns_mean"]) == {"p0", "p1"}
    assert set(result["learners"]) == {"p0", "p1"}


def test_evaluation_reports_per_agent_returns() -> None:
    config = two_agents().evaluation(evaluation_interval=1, evaluation_duration=3)
    with config.build() as algo:
        result = algo.train()
        evaluated = algo.evaluate()
    ev = result["evaluation"]["env_runners"]
    assert ev["num_episodes"] >= 3
    assert set(ev["agent_episode_returns_mean"]) == {"0", "1"}
    assert set(evaluated["env_runners"]["module_episode_returns_mean"]) == {"p0", "p1"}


class AgentReturns(Callback):
    """Deterministic per-agent metrics, for comparing a live run with its replay."""

    def on_episode_created(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        assert isinstance(episode, MultiAgentEpisode)  # live, and rebuilt by replay
        metrics_logger.log_value("created", 1, reduce="sum")

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        assert isinstance(episode, MultiAgentEpisode)
        for agent_id, agent in episode.agent_episodes.items():
            metrics_logger.log_value(("ret", str(agent_id)), agent.get_return(), window=20)
            metrics_logger.log_value(("steps", str(agent_id)), len(agent), reduce="sum")
        metrics_logger.log_value("env_steps", len(episode), reduce="sum")


@pytest.mark.parametrize("fmt", ["msgpack", "jsonl"])
def test_replaying_a_live_multi_agent_recording_gives_the_same_metrics(
    tmp_path: Path, fmt: str
) -> None:
    path = tmp_path / f"run.{fmt}"
    live = AgentReturns()
    config = two_agents().callbacks([Recorder(path, format=fmt), live])
    config.training(train_batch_size=300)
    with config.build() as algo:
        algo.train()
        runner_metrics = algo.env_runner.metrics
        expected = {
            key: runner_metrics.peek(key)
            for key in (("ret", "0"), ("ret", "1"), "env_steps", "created")
        }
        expected["steps"] = runner_metrics.peek("steps")
    summary = check_lifecycle(read_recording(path))
    assert summary.episodes > 0
    replayed = replay_into(path, AgentReturns, sources=["env_runner:0"])
    logger = replayed.logger
    assert {key: logger.peek(key) for key in expected} == expected
