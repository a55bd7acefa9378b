"""Observation and action spaces as RLlib's default pipeline takes them."""

from __future__ import annotations

import sys
from collections import OrderedDict
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from hookbus.kernel import ConfigError
from hookbus.runners import DQNConfig, FlattenObservations, PPOConfig

sys.path.insert(0, str(Path(__file__).parents[1]))  # so worker processes import the envs too
import space_envs

NESTED = gym.spaces.Dict(
    {
        "c": gym.spaces.MultiDiscrete([2, 3]),
        "a": gym.spaces.Box(-10.0, 10.0, (), np.float32),
        "b": gym.spaces.Tuple(
            [gym.spaces.Discrete(2), gym.spaces.Box(-1.0, 1.0, (2, 1), np.float32)]
        ),
    }
)


def flatten(space: gym.Space[Any], *observations: Any) -> np.ndarray:
    piece = FlattenObservations(space)
    return np.stack([piece.preprocess(o) for o in observations])


def test_flattening_follows_rllibs_order_and_encodings() -> None:
    # RLlib's FlattenObservations docstring example, values worked out by hand: keys sorted
    # (a, b, c); Box flattened; Discrete(2) one-hot; MultiDiscrete([2, 3]) one-hot per part.
    first = {"a": np.float32(-10.0), "b": (1, np.full((2, 1), -1.0)), "c": np.array([0, 2])}
    second = {"a": np.float32(10.0), "b": (0, np.ones((2, 1))), "c": np.array([1, 1])}
    rows = flatten(NESTED, first, second)
    assert rows.dtype == np.float32
    np.testing.assert_array_equal(rows[0], [-10, 0, 1, -1, -1, 1, 0, 0, 0, 1])
    np.testing.assert_array_equal(rows[1], [10, 1, 0, 1, 1, 0, 1, 0, 1, 0])
    assert FlattenObservations(NESTED).observation_space == gym.spaces.Box(
        -np.inf, np.inf, (10,), np.float32
    )


def test_dict_keys_are_sorted_whatever_order_the_space_keeps() -> None:
    ordered = gym.spaces.Dict(OrderedDict(z=gym.spaces.Discrete(2), a=gym.spaces.Discrete(3)))
    assert list(ordered.spaces) == ["z", "a"]  # gymnasium keeps an OrderedDict's order
    np.testing.assert_array_equal(flatten(ordered, {"z": 1, "a": 2})[0], [0, 0, 1, 0, 1])


def test_starts_are_subtracted_before_one_hot_encoding() -> None:
    np.testing.assert_array_equal(flatten(gym.spaces.Discrete(3, start=-1), -1)[0], [1, 0, 0])
    space = gym.spaces.MultiDiscrete([2, 2], start=[5, -3])
    np.testing.assert_array_equal(flatten(space, np.array([6, -3]))[0], [0, 1, 1, 0])


def test_a_value_outside_its_space_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match=r"observation values \[4\] at \[\] are outside"):
        flatten(gym.spaces.Discrete(3), 4)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 4))
def test_batched_and_single_observations_flatten_alike(seed: int, n: int) -> None:
    # What a vector env returns (leaves stacked) and n single observations give equal rows.
    space = NESTED
    space.seed(seed)
    observations = [space.sample() for _ in range(n)]
    batched = gym.vector.utils.concatenate(
        space, observations, gym.vector.utils.create_empty_array(space, n)
    )
    piece = FlattenObservations(space)
    assert piece._bound is not None
    np.testing.assert_array_equal(piece._bound.batch(batched), flatten(space, *observations))


def test_an_unsupported_observation_space_is_one_error_naming_it() -> None:
    config = PPOConfig().environment(space_envs.TextEnv)
    with pytest.raises(
        ConfigError,
        match=r"unsupported observation space Text\(.*\): hookbus's modules take Box \(any "
        r"shape\), Discrete, MultiDiscrete, MultiBinary, and Dict or Tuple",
    ):
        config.build()


def one_episode(algo: Any) -> Any:
    """Sample one episode with the local runner (RLlib's sync sample())."""
    return algo.env_runner.sample(num_episodes=1)[0]


def frozen_lake() -> PPOConfig:
    return (
        PPOConfig()
        .environment("FrozenLake-v1", env_config={"is_slippery": False})
        .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
        .debugging(seed=0)
    )


def test_episodes_keep_the_envs_observations_and_the_module_gets_them_one_hot() -> None:
    with frozen_lake().build() as algo:
        runner = algo.env_runner
        episode = one_episode(algo)
        observations = episode.get_observations()
        assert observations.dtype.kind == "i"  # FrozenLake's cell numbers, as the env gave
        rows = runner.module_observations(episode.observations)
        assert rows.shape == (len(observations), 16)
        np.testing.assert_array_equal(rows.argmax(axis=1), observations)
        assert (rows.sum(axis=1) == 1).all()
        assert runner.module_observation_space == gym.spaces.Box(-np.inf, np.inf, (16,), np.float32)
        assert algo.learner.module.pi.sizes[0] == 16
        action = algo.compute_single_action(int(observations[0]), explore=False)
        assert algo.env_runner.env.single_action_space.contains(int(action))


def test_dict_observations_come_back_batched_by_key() -> None:
    config = PPOConfig().environment(space_envs.DictCorridor).debugging(seed=0)
    with config.training(train_batch_size=100, minibatch_size=50, num_epochs=1).build() as algo:
        episode = one_episode(algo)
        first = episode.get_observations(0)
        assert set(first) == {"agent", "goal", "time_left"}
        stacked = episode.get_observations()  # as RLlib's episodes: a dict of arrays
        assert set(stacked) == {"agent", "goal", "time_left"}
        assert stacked["time_left"].shape == (len(episode) + 1, 1)
        assert stacked["agent"][0] == first["agent"]
        # 8 + 8 one-hot, then the Box: the module's input, keys sorted (agent, goal, time_left)
        assert algo.env_runner.module_observation_space.shape == (17,)
        algo.train()


@pytest.mark.parametrize(
    "space",
    [gym.spaces.Box(-1.0, 1.0, (), np.float32), gym.spaces.Box(-1.0, 1.0, (2, 3), np.float32)],
    ids=["scalar-box", "2d-box"],
)
def test_boxes_of_any_shape_train(space: gym.spaces.Box) -> None:
    class BoxEnv(gym.Env[Any, int]):
        observation_space = space
        action_space = gym.spaces.Discrete(2)

        def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[Any, dict]:
            super().reset(seed=seed)
            return space.sample(), {}

        def step(self, action: int) -> tuple[Any, float, bool, bool, dict]:
            return space.sample(), 1.0, bool(self.np_random.random() < 0.1), False, {}

    config = PPOConfig().environment(BoxEnv).debugging(seed=0)
    with config.training(train_batch_size=100, minibatch_size=50, num_epochs=1).build() as algo:
        result = algo.train()
        assert algo.learner.module.obs_dim == max(1, int(np.prod(space.shape)))
        episode = one_episode(algo)
    assert result["num_env_steps_sampled_lifetime"] >= 100
    assert episode.get_observations(0).shape == space.shape


def test_ppo_samples_and_trains_multi_discrete_actions() -> None:
    config = PPOConfig().environment(space_envs.TupleEnv).debugging(seed=0)
    config = config.training(train_batch_size=200, minibatch_size=50, num_epochs=4)
    with config.env_runners(num_envs_per_env_runner=2).build() as algo:
        results = [algo.train() for _ in range(6)]
        episode = one_episode(algo)
    actions = episode.get_actions()
    assert actions.shape == (len(episode), 2)
    assert all(algo.env_runner.env.single_action_space.contains(a) for a in actions)
    # The reward is 1 when action[0] names the observation's Discrete item: a random policy
    # earns 10 / 3 per 10-step episode, a reading one more.
    returns = [r["env_runners"]["episode_return_mean"] for r in results]
    assert returns[-1] > returns[0]


def test_dqn_learns_on_discrete_observations_and_refuses_other_actions() -> None:
    config = (
        DQNConfig()
        .environment("FrozenLake-v1", env_config={"is_slippery": False})
        .training(num_steps_sampled_before_learning_starts=100, train_batch_size=32)
        .reporting(min_sample_timesteps_per_iteration=200)
        .debugging(seed=0)
    )
    with config.build() as algo:
        result = algo.train()
        assert algo.learner.module.obs_dim == 16
    assert result["num_env_steps_sampled_lifetime"] >= 200
    with pytest.raises(
        ConfigError,
        match=r"DQN needs a Discrete action space .*MultiDiscrete\(\[3 2\]\); "
        r"MultiDiscrete and Box action spaces train with PPO",
    ):
        config.environment(space_envs.TupleEnv).build()
