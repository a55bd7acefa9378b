"""RLlib's result-key constants name keys that hookbus's results really carry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import hookbus.metrics as m
from hookbus.runners import MultiAgentCartPole, PPOConfig

SINGLE = PPOConfig().environment("CartPole-v1").training(train_batch_size=200, minibatch_size=50)


def policy_of(agent_id: Any, *args: Any, **kwargs: Any) -> str:
    return f"p{agent_id}"


@pytest.fixture(scope="module")
def single_result() -> dict[str, Any]:
    config = SINGLE.copy().evaluation(evaluation_interval=1, evaluation_duration=1)
    with config.build() as algo:
        return algo.train()


@pytest.fixture(scope="module")
def multi_result() -> dict[str, Any]:
    config = (
        SINGLE.copy()
        .environment(MultiAgentCartPole, env_config={"num_agents": 2})
        .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=policy_of)
    )
    with config.build() as algo:
        return algo.train()


def test_the_values_are_rllibs() -> None:
    assert (m.ENV_RUNNER_RESULTS, m.EVALUATION_RESULTS, m.LEARNER_RESULTS, m.TIMERS) == (
        "env_runners",
        "evaluation",
        "learners",
        "timers",
    )
    assert m.EPISODE_RETURN_MEAN == "episode_return_mean"
    assert m.NUM_ENV_STEPS_SAMPLED_LIFETIME == "num_env_steps_sampled_lifetime"
    assert m.TRAINING_ITERATION == "training_iteration"


def test_top_level_and_env_runner_keys(single_result: dict[str, Any]) -> None:
    r = single_result
    assert {m.TRAINING_ITERATION, m.NUM_ENV_STEPS_SAMPLED_LIFETIME} <= r.keys()
    runners = r[m.ENV_RUNNER_RESULTS]
    for key in (
        m.EPISODE_RETURN_MEAN,
        m.EPISODE_RETURN_MAX,
        m.EPISODE_RETURN_MIN,
        m.EPISODE_LEN_MEAN,
        m.EPISODE_LEN_MAX,
        m.EPISODE_LEN_MIN,
        m.NUM_EPISODES,
        m.NUM_EPISODES_LIFETIME,
        m.NUM_ENV_STEPS_SAMPLED,
        m.NUM_ENV_STEPS_SAMPLED_LIFETIME,
    ):
        assert key in runners, key
    assert m.EPISODE_RETURN_MEAN in r[m.EVALUATION_RESULTS][m.ENV_RUNNER_RESULTS]
    assert m.NUM_MODULE_STEPS_TRAINED in r[m.LEARNER_RESULTS]["default_policy"]
    for key in (
        m.TRAINING_ITERATION_TIMER,
        m.EVALUATION_ITERATION_TIMER,
        m.ENV_RUNNER_SAMPLING_TIMER,
        m.LEARNER_UPDATE_TIMER,
        m.SYNCH_WORKER_WEIGHTS_TIMER,
    ):
        assert key in r[m.TIMERS], key


def test_multi_agent_keys_hold_one_value_per_agent_or_module(
    multi_result: dict[str, Any],
) -> None:
    runners = multi_result[m.ENV_RUNNER_RESULTS]
    for key in (m.AGENT_EPISODE_RETURNS_MEAN, m.NUM_AGENT_STEPS_SAMPLED):
        assert set(runners[key]) == {"0", "1"}, key
    assert set(runners[m.NUM_AGENT_STEPS_SAMPLED_LIFETIME]) == {"0", "1"}
    for key in (
        m.MODULE_EPISODE_RETURNS_MEAN,
        m.NUM_MODULE_STEPS_SAMPLED,
        m.NUM_MODULE_STEPS_SAMPLED_LIFETIME,
    ):
        assert set(runners[key]) == {"p0", "p1"}, key


def test_every_constant_is_checked_above() -> None:
    source = Path(__file__).read_text()
    constants = [name for name in m.__all__ if name.isupper()]
    unchecked = [name for name in constants if f"m.{name}" not in source]
    assert not unchecked
