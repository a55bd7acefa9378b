"""env_runners(env_to_module_connector=...): FlattenObservations and users' own pieces."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from hookbus.kernel import ConfigError
from hookbus.runners import (
    FlattenObservations,
    ObservationPreprocessor,
    PPOConfig,
    SingleAgentObservationPreprocessor,
)

sys.path.insert(0, str(Path(__file__).parents[1]))
import space_envs


class Halve(SingleAgentObservationPreprocessor):
    """Halve Box observations (RLlib 2.41's form: preprocess(observation, episode))."""

    def preprocess(self, observation: Any, episode: Any) -> Any:
        return np.asarray(observation, dtype=np.float32) / 2


class AgentOnly(ObservationPreprocessor):
    """Keep the corridor's agent position (RLlib 2.40's one-argument form)."""

    def recompute_output_observation_space(
        self, input_observation_space: Any, input_action_space: Any
    ) -> gym.Space[Any]:
        return input_observation_space["agent"]

    def preprocess(self, observation: Any) -> Any:
        return observation["agent"]


def small(config: PPOConfig) -> PPOConfig:
    return config.training(train_batch_size=100, minibatch_size=50, num_epochs=1).debugging(seed=0)


def one_episode(algo: Any) -> Any:
    return algo.env_runner.sample(num_episodes=1)[0]


def test_flatten_observations_as_rllibs_examples_write_it() -> None:
    config = small(PPOConfig().environment(space_envs.DictCorridor)).env_runners(
        env_to_module_connector=lambda env: FlattenObservations()
    )
    with config.build() as algo:
        algo.train()
        assert algo.env_runner.module_observation_space.shape == (17,)
        episode = one_episode(algo)
    assert isinstance(episode.get_observations(0), dict)  # the episode keeps the env's


def test_a_users_piece_transforms_what_the_module_sees_only() -> None:
    config = small(PPOConfig().environment("CartPole-v1"))
    with config.env_runners(env_to_module_connector=lambda env: Halve()).build() as algo:
        runner = algo.env_runner
        episode = one_episode(algo)
        raw = episode.get_observations()
        np.testing.assert_allclose(runner.module_observations(episode.observations), raw / 2)
        # Halve keeps recompute_output_observation_space's default: the input's space.
        assert runner.module_observation_space == runner.env.single_observation_space


def test_pieces_run_in_order_and_a_non_box_output_is_flattened() -> None:
    # AgentOnly leaves a Discrete(8): the pipeline one-hot encodes it for the module.
    config = small(PPOConfig().environment(space_envs.DictCorridor)).env_runners(
        env_to_module_connector=lambda env: [AgentOnly()]
    )
    with config.build() as algo:
        runner = algo.env_runner
        assert runner.module_observation_space.shape == (8,)
        episode = one_episode(algo)
        rows = runner.module_observations(episode.observations)
        agents = [o["agent"] for o in episode.observations]
        np.testing.assert_array_equal(rows.argmax(axis=1), agents)
        algo.train()


def test_a_piece_that_is_not_a_preprocessor_is_one_error_naming_it() -> None:
    config = small(PPOConfig().environment("CartPole-v1")).env_runners(
        env_to_module_connector=lambda env: [FlattenObservations(), "scale"]
    )
    with pytest.raises(
        ConfigError,
        match=r"env_to_module_connector returned 'scale': allowed are FlattenObservations\(\)",
    ):
        config.build()


def test_the_setting_takes_a_callable_only() -> None:
    with pytest.raises(ConfigError, match=r"env_to_module_connector.*FlattenObservations"):
        PPOConfig().environment("CartPole-v1").env_runners(
            env_to_module_connector=FlattenObservations()  # the piece, not fn(env)
        ).validate()


def test_rllibs_three_argument_form_gets_the_env_and_its_spaces() -> None:
    seen: list[Any] = []

    def connector(env: Any, spaces: Any, device: Any) -> Any:
        seen.append((spaces["__env_single__"][0], device))
        return FlattenObservations()

    config = small(PPOConfig().environment(space_envs.DictCorridor))
    with config.env_runners(env_to_module_connector=connector).build() as algo:
        assert algo.env_runner.module_observation_space.shape == (17,)
    assert seen
    assert seen[0] == (space_envs.DictCorridor().observation_space, None)


def test_the_multi_agent_form_in_a_single_agent_run_is_one_error() -> None:
    config = small(PPOConfig().environment(space_envs.DictCorridor)).env_runners(
        env_to_module_connector=lambda env: FlattenObservations(multi_agent=True)
    )
    with pytest.raises(
        ConfigError,
        match=r"FlattenObservations\(multi_agent=True\) is for multi-agent envs.*"
        r"allowed: FlattenObservations\(\)",
    ):
        config.build()
