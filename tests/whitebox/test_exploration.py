"""Exploration: the epsilon schedule, SoftQ's temperature, the explore switch, bad settings."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from hookbus.kernel import ConfigError
from hookbus.runners import (
    DQNConfig,
    DQNModule,
    EpsilonGreedy,
    PPOConfig,
    PPOModule,
    SoftQ,
    StochasticSampling,
)
from hookbus.runners._exploration import make_exploration

OBS_SPACE = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
ACTIONS = gym.spaces.Discrete(3)


class AlwaysOne:
    """A module whose greedy action is always 1."""

    def forward_inference(self, obs: Any) -> Any:
        return np.ones(len(obs), dtype=np.int64)


@pytest.fixture
def obs() -> np.ndarray:
    return np.random.default_rng(0).uniform(-1, 1, (256, 4)).astype(np.float32)


@pytest.fixture
def dqn_module() -> DQNModule:
    return DQNModule(OBS_SPACE, ACTIONS, rng=1)


def test_epsilon_schedule_is_piecewise_linear_as_rllibs() -> None:
    exploration = make_exploration(DQNConfig.default_exploration_config, ACTIONS)
    assert isinstance(exploration, EpsilonGreedy)
    values = [exploration.epsilon(t) for t in (0, 2500, 5000, 10_000, 50_000)]
    assert values == pytest.approx([1.0, 0.755, 0.51, 0.02, 0.02])
    warm = EpsilonGreedy(ACTIONS, initial_epsilon=0.5, final_epsilon=0.1, warmup_timesteps=100)
    assert warm.epsilon(100) == 0.5
    assert warm.epsilon(100 + 50_000) == pytest.approx(0.3)  # epsilon_timesteps=100_000
    assert EpsilonGreedy(ACTIONS).final_epsilon == 0.05  # RLlib's class defaults


def test_epsilon_greedy_takes_random_actions_at_rate_epsilon(obs: np.ndarray) -> None:
    exploration = EpsilonGreedy(
        ACTIONS, initial_epsilon=1.0, final_epsilon=0.1, epsilon_timesteps=10
    )
    rng = np.random.default_rng(0)
    many = np.concatenate([obs] * 40)  # 10240 rows
    early = exploration.get_actions(AlwaysOne(), many, rng, 0, True)
    np.testing.assert_allclose(np.bincount(early, minlength=3) / len(many), 1 / 3, atol=0.02)
    late = exploration.get_actions(AlwaysOne(), many, rng, 10, True)
    # epsilon 0.1: a random action is one of the other two with probability 2/3.
    assert np.mean(late != 1) == pytest.approx(0.1 * 2 / 3, abs=0.01)
    assert set(np.unique(late)) == {0, 1, 2}


def test_softq_with_temperature_to_zero_equals_greedy(
    obs: np.ndarray, dqn_module: DQNModule
) -> None:
    greedy = dqn_module.forward_inference(obs)
    rng = np.random.default_rng(0)
    for temperature in (1e-4, 1e-8, 1e-300):
        actions = SoftQ(ACTIONS, temperature=temperature).get_actions(dqn_module, obs, rng, 0, True)
        np.testing.assert_array_equal(actions, greedy)
    hot = SoftQ(ACTIONS, temperature=1e6).get_actions(
        dqn_module, np.concatenate([obs] * 20), rng, 0, True
    )
    np.testing.assert_allclose(np.bincount(hot) / len(hot), 1 / 3, atol=0.03)


def test_softq_samples_softmax_of_q_over_temperature(dqn_module: DQNModule) -> None:
    one = np.full((20_000, 4), 0.3, dtype=np.float32)
    q = dqn_module.q_values(one[:1])[0].astype(np.float64)
    for temperature in (0.05, 0.5):
        expected = np.exp((q - q.max()) / temperature)
        expected /= expected.sum()
        actions = SoftQ(ACTIONS, temperature=temperature).get_actions(
            dqn_module, one, np.random.default_rng(1), 0, True
        )
        np.testing.assert_allclose(
            np.bincount(actions, minlength=3) / len(one), expected, atol=0.015
        )


def test_softq_uses_a_policys_logits() -> None:
    module = PPOModule(OBS_SPACE, ACTIONS, rng=0)
    one = np.full((20_000, 4), 0.3, dtype=np.float32)
    logits = module.action_dist_inputs(one[:1])[0].astype(np.float64)
    expected = np.exp(logits - logits.max())
    expected /= expected.sum()
    actions = SoftQ(ACTIONS).get_actions(module, one, np.random.default_rng(1), 0, True)
    np.testing.assert_allclose(np.bincount(actions, minlength=3) / len(one), expected, atol=0.015)


def test_softq_follows_a_module_swap(dqn_module: DQNModule, obs: np.ndarray) -> None:
    """SoftQ finds a module's values method once, and again when the runner's module changes."""
    softq, rng = SoftQ(ACTIONS, temperature=1e-8), np.random.default_rng(0)
    policy = PPOModule(OBS_SPACE, ACTIONS, rng=0)
    greedy_q = dqn_module.forward_inference(obs)
    greedy_pi = policy.forward_inference(obs)
    assert not np.array_equal(greedy_q, greedy_pi)
    for module, greedy in [(dqn_module, greedy_q), (policy, greedy_pi), (dqn_module, greedy_q)]:
        np.testing.assert_array_equal(softq.get_actions(module, obs, rng, 0, True), greedy)


@pytest.mark.parametrize(
    "exploration",
    [
        EpsilonGreedy(ACTIONS, initial_epsilon=1.0),
        SoftQ(ACTIONS, temperature=100.0),
        StochasticSampling(ACTIONS, random_timesteps=10**9),
    ],
    ids=["EpsilonGreedy", "SoftQ", "StochasticSampling"],
)
def test_explore_off_is_deterministic_and_greedy(
    exploration: Any, obs: np.ndarray, dqn_module: DQNModule
) -> None:
    rng = np.random.default_rng(0)
    runs = [exploration.get_actions(dqn_module, obs, rng, 0, False) for _ in range(3)]
    for actions in runs:
        np.testing.assert_array_equal(actions, dqn_module.forward_inference(obs))
    explored = exploration.get_actions(dqn_module, obs, rng, 0, True)
    assert not np.array_equal(explored, runs[0])


def test_dqn_module_under_stochastic_sampling_samples_softmax_q(dqn_module: DQNModule) -> None:
    one = np.full((20_000, 4), -0.2, dtype=np.float32)
    q = dqn_module.q_values(one[:1])[0].astype(np.float64)
    expected = np.exp(q - q.max())
    expected /= expected.sum()
    actions = StochasticSampling(ACTIONS).get_actions(
        dqn_module, one, np.random.default_rng(0), 0, True
    )
    np.testing.assert_allclose(np.bincount(actions, minlength=3) / len(one), expected, atol=0.015)


def test_unknown_types_and_bad_settings_are_clear_errors() -> None:
    with pytest.raises(
        ConfigError,
        match="unknown exploration type 'Greedy'; known types: StochasticSampling, "
        "EpsilonGreedy, SoftQ",
    ):
        make_exploration({"type": "Greedy"}, ACTIONS)
    with pytest.raises(ConfigError, match="EpsilonGreedy has no setting 'temperature'; allowed: "):
        make_exploration({"type": "EpsilonGreedy", "temperature": 1.0}, ACTIONS)
    with pytest.raises(
        ConfigError, match=r"initial_epsilon must be a number in \[0, 1\], got 1\.5"
    ):
        EpsilonGreedy(ACTIONS, initial_epsilon=1.5)
    with pytest.raises(ConfigError, match="epsilon_timesteps must be an int >= 0, got -1"):
        EpsilonGreedy(ACTIONS, epsilon_timesteps=-1)
    with pytest.raises(ConfigError, match="SoftQ temperature must be a number > 0, got 0"):
        SoftQ(ACTIONS, temperature=0)
    with pytest.raises(ConfigError, match="SoftQ needs a Discrete action space"):
        SoftQ(gym.spaces.Box(-1.0, 1.0, (2,)))
    with pytest.raises(ConfigError, match="SoftQ needs a module with q_values"):
        SoftQ(ACTIONS).get_actions(AlwaysOne(), np.zeros((1, 4)), np.random.default_rng(), 0, True)


def test_bad_exploration_values_fail_the_build() -> None:
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(exploration_config={"type": "EpsilonGreedy", "final_epsilon": -0.1})
    )
    with pytest.raises(ConfigError, match="final_epsilon must be a number in \\[0, 1\\]"):
        config.build()


def test_epsilon_greedy_works_with_a_policy_module(small_ppo: PPOConfig) -> None:
    config = small_ppo.env_runners(
        exploration_config={"type": "EpsilonGreedy", "epsilon_timesteps": 100}
    )
    with config.build() as algo:
        result = algo.train()
    assert result["env_runners"]["num_env_steps_sampled"] == 200


def test_explore_switch_and_per_call_override() -> None:
    config = (
        DQNConfig()
        .environment("CartPole-v1")
        .env_runners(explore=False)
        .reporting(min_sample_timesteps_per_iteration=50)
        .training(num_steps_sampled_before_learning_starts=10_000)
        .debugging(seed=0)
    )
    obs = np.array([0.01, 0.0, 0.02, 0.0], dtype=np.float32)
    with config.build() as algo:
        module = algo.learner.module
        algo.train()
        # With explore off, every sampled action is the greedy one, although epsilon is 1.
        batch = algo.local_replay_buffer.sample(200)
        np.testing.assert_array_equal(batch["actions"], module.forward_inference(batch["obs"]))
        greedy = {int(algo.compute_single_action(obs)) for _ in range(20)}
        explored = {int(algo.compute_single_action(obs, explore=True)) for _ in range(50)}
    assert greedy == {int(module.forward_inference(obs[None])[0])}
    assert explored == {0, 1}  # epsilon is still 1 at this timestep
