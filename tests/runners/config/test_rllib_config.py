"""RLlib's AlgorithmConfig API that user code calls: overrides, from_dict, freeze, env_config.

Ports from RLlib's rllib/algorithms/tests/test_algorithm_config.py where they apply:
``test_freezing_of_algo_config`` keeps its assertion that setting an attribute of a frozen
config raises AttributeError ("Cannot set attribute.+of an already frozen AlgorithmConfig");
its config uses the old API stack's 4-tuple policy spec, which hookbus does not take
(``PolicySpec`` instead), so the port builds the same multi-agent config with PolicySpecs.
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from hookbus.runners import AlgorithmConfig, DQNConfig, PolicySpec, PPOConfig


def test_freezing_of_algo_config() -> None:
    config = (
        AlgorithmConfig()
        .environment("CartPole-v1")
        .training(lr=0.12345, train_batch_size=3000)
        .multi_agent(
            policies={"pol1": PolicySpec()},
            policy_mapping_fn=lambda agent_id, episode, **kw: "pol1",
        )
    )
    config.freeze()

    def set_lr(config: Any) -> None:
        config.lr = 0.01

    with pytest.raises(
        AttributeError, match=r"Cannot set attribute.+of an already frozen AlgorithmConfig"
    ):
        set_lr(config)
    # The builder methods and any attribute are refused alike; reading still works.
    with pytest.raises(AttributeError, match=r"Cannot set attribute \(gamma\)"):
        config.training(gamma=0.5)
    with pytest.raises(AttributeError, match=r"Cannot set attribute \(in_evaluation\)"):
        config.in_evaluation = True
    assert config.lr == 0.12345
    assert config.is_frozen


def test_copy_keeps_or_changes_frozenness_as_asked() -> None:
    config = PPOConfig().environment("CartPole-v1")
    config.freeze()
    assert config.copy().is_frozen
    thawed = config.copy(copy_frozen=False)
    thawed.lr = 0.5
    assert (thawed.lr, config.lr) == (0.5, 1e-3)
    assert PPOConfig().copy(copy_frozen=True).is_frozen
    assert pickle.loads(pickle.dumps(config)).is_frozen  # to workers, frozen as it was


def test_a_frozen_config_builds_and_trains_with_evaluation() -> None:
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
        .evaluation(evaluation_interval=1, evaluation_duration=1)
    )
    config.freeze()
    with config.build() as algo:
        result = algo.train()
    assert result["evaluation"]["env_runners"]["num_episodes"] >= 1


def test_overrides_checks_names_against_the_config_class() -> None:
    assert PPOConfig.overrides(explore=False, lambda_=0.9) == {"explore": False, "lambda_": 0.9}
    assert PPOConfig.overrides(**{"lambda": 0.9}) == {"lambda_": 0.9}
    with pytest.raises(
        KeyError, match="Invalid property name clip_param for config class DQNConfig!"
    ):
        DQNConfig.overrides(clip_param=0.1)
    # As RLlib's docs use it: the evaluation runners' overrides.
    config = PPOConfig().evaluation(evaluation_config=AlgorithmConfig.overrides(explore=False))
    assert config.get_evaluation_config_object().explore is False


def test_from_dict_makes_a_new_config() -> None:
    config = PPOConfig.from_dict({"lr": 0.01, "env": "CartPole-v1", "_is_frozen": True})
    assert (config.lr, config.env, config.is_frozen) == (0.01, "CartPole-v1", False)


def test_env_config_merges_into_the_existing_one_as_rllib_deep_updates() -> None:
    config = PPOConfig().environment(
        "FrozenLake-v1", env_config={"is_slippery": False, "map": {"size": 4, "seed": 1}}
    )
    config.environment(env_config={"map_name": "8x8", "map": {"size": 8}})
    assert config.env_config == {
        "is_slippery": False,
        "map_name": "8x8",
        "map": {"size": 8, "seed": 1},
    }


def test_api_stack_switches_read_true_and_is_multi_agent_is_a_property() -> None:
    config = PPOConfig().api_stack(
        enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True
    )
    assert config.enable_rl_module_and_learner is True
    assert config.enable_env_runner_and_connector_v2 is True
    assert config.is_multi_agent is False
    assert config.multi_agent(policies={"a", "b"}).is_multi_agent is True
