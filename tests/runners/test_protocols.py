"""The Learner and module Protocols: hookbus's learners fit them, and so may a user's.

mypy checks the static fit of PPO's, DQN's and the multi-agent learners and modules (each
module ends with the check); here: what the Algorithm does with a learner that has only
the Protocol's members, and the optional capabilities that DQN asks for by Protocol.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from hookbus.kernel import ConfigError
from hookbus.runners import (
    AlgorithmStateError,
    DQNConfig,
    DQNLearner,
    MultiAgentLearner,
    MultiLearner,
    PPOConfig,
)


class Linear:
    """A module of the RLModule Protocol's members only: argmax of ``obs @ weights``."""

    def __init__(self, obs_dim: int, num_actions: int) -> None:
        self.weights = np.zeros((obs_dim, num_actions))

    def forward_exploration(self, obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.forward_inference(obs)

    def forward_inference(self, obs: np.ndarray) -> np.ndarray:
        return np.argmax(obs @ self.weights, axis=1)

    def get_state(self) -> dict[str, Any]:
        return {"weights": self.weights.copy()}

    def set_state(self, state: dict[str, Any]) -> None:
        self.weights = np.array(state["weights"])


class Counting:
    """A learner of the Learner Protocol's members only (no lr, no target network)."""

    def __init__(self, config: Any, observation_space: Any, action_space: Any) -> None:
        self.module = Linear(observation_space.shape[0], action_space.n)
        self.updates = 0

    def update(self, batch: Any) -> dict[str, float]:
        self.updates += 1
        return {"updates": float(self.updates)}

    def get_state(self) -> dict[str, Any]:
        return {"updates": self.updates, "module": self.module.get_state()}

    def set_state(self, state: dict[str, Any]) -> None:
        self.updates = int(state["updates"])
        self.module.set_state(state["module"])


@pytest.fixture
def tiny_dqn() -> DQNConfig:
    config = (
        DQNConfig()
        .environment("CartPole-v1")
        .reporting(min_sample_timesteps_per_iteration=64)
        .training(num_steps_sampled_before_learning_starts=32, target_network_update_freq=16)
        .debugging(seed=0)
    )
    assert isinstance(config, DQNConfig)
    return config


def test_only_a_multi_agent_learner_is_a_multi_learner(small_ppo: PPOConfig) -> None:
    with small_ppo.build() as algo:
        assert not isinstance(algo.learner, MultiLearner)
        spaces = {"p0": (algo.env_runner.env.single_observation_space, gym.spaces.Discrete(2))}
        assert isinstance(algo.build_multi_agent_learner(spaces), MultiLearner)
    assert isinstance(algo.learner.module, Linear) is False


def test_a_protocol_only_learner_trains_under_dqn(tiny_dqn: DQNConfig) -> None:
    """No ``update_target``, no ``lr``: DQN skips the target update and reports its lr."""
    config = tiny_dqn.training(
        learner_class=Counting, lr=1e-3, replay_buffer_config={"type": "ReplayBuffer"}
    )
    with config.build() as algo:
        result = algo.train()
        learner = algo.learner
    assert isinstance(learner, Counting)
    stats = result["learners"]["default_policy"]
    assert learner.updates > 0
    assert stats["num_target_updates"] >= 1  # counted as RLlib counts them; nothing to move
    assert stats["default_optimizer_learning_rate"] == pytest.approx(1e-3)


def test_prioritized_replay_needs_a_learner_with_td_errors(tiny_dqn: DQNConfig) -> None:
    config = tiny_dqn.training(learner_class=Counting)  # prioritized: DQN's default
    with config.build() as algo, pytest.raises(ConfigError, match="needs a learner with td_error"):
        algo.train()


def test_dqns_own_learner_moves_its_target_network(tiny_dqn: DQNConfig) -> None:
    with tiny_dqn.build() as algo:
        algo.train()
        learner = algo.learner
        assert isinstance(learner, DQNLearner)
        online, target = learner.module.get_state(), learner.target_module.get_state()
    assert all(np.array_equal(online[k], target[k]) for k in online)  # tau=1: a copy


@pytest.mark.anyio
async def test_update_learner_of_a_multi_learner_needs_the_modules_learner(
    small_ppo: PPOConfig,
) -> None:
    async with small_ppo.build() as algo:
        obs_space = algo.env_runner.env.single_observation_space
        multi = algo.build_multi_agent_learner({"p0": (obs_space, gym.spaces.Discrete(2))})
        assert isinstance(multi, MultiAgentLearner)
        algo.learner = multi
        with pytest.raises(TypeError, match=r"learner=algo\.learner\.learners\[module_id\]"):
            await algo.update_learner([], batch_size=0)


@pytest.mark.anyio
async def test_the_learner_is_there_once_set_up(small_ppo: PPOConfig) -> None:
    algo = small_ppo.build()  # inside a loop: constructed only
    assert repr(algo) == "<PPO built, iteration 0>"
    with pytest.raises(AlgorithmStateError, match="not set up yet"):
        algo.learner  # noqa: B018
    async with algo:
        assert repr(algo) == "<PPO ready, iteration 0>"
        assert algo.learner.module is algo.env_runner.module
    assert repr(algo) == "<PPO stopped, iteration 0>"
