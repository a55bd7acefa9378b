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

from hookbus.kernel import ConfigError
from hookbus.runners import AlgorithmConfig, DQNConfig, PolicySpec, PPOConfig, PPOLearner


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


def test_learners_takes_one_learner_and_refuses_more_or_gpus() -> None:
    config = PPOConfig().training(train_batch_size=512)
    learner_class = config.learner_class
    same = config.learners(
        num_learners=0,
        num_cpus_per_learner="auto",
        num_gpus_per_learner=0,
        custom_resources_per_learner={},
        num_aggregator_actors_per_learner=1,
        max_requests_in_flight_per_learner=3,
        local_gpu_idx=0,
        add_default_connectors_to_learner_pipeline=True,
    )
    assert same is config
    assert config.learners(num_learners=1).learner_class is learner_class
    assert config.total_train_batch_size == config.train_batch_size_per_learner == 512
    with pytest.raises(ConfigError, match=r"num_learners=2\).+one numpy learner.+0 or 1"):
        config.learners(num_learners=2)
    with pytest.raises(ConfigError, match=r"num_gpus_per_learner=1\).+on its CPU"):
        config.learners(num_gpus_per_learner=1)
    with pytest.raises(ConfigError, match=r"learner_connector=\.\.\.\).+learner_class"):
        config.learners(learner_connector=lambda obs_space, act_space: [])


def test_learners_learner_class_is_the_training_setting() -> None:
    class MyLearner(PPOLearner):
        pass

    config = PPOConfig().learners(learner_class=MyLearner)
    assert config.learner_class is MyLearner


def test_resources_and_checkpointing_are_accepted_offline_data_is_refused() -> None:
    config = PPOConfig()
    assert config.resources(num_cpus_for_main_process=1, num_gpus=0) is config
    assert config.checkpointing(export_native_model_files=True) is config
    assert config.offline_data() is config
    with pytest.raises(ConfigError, match=r"resources\(num_gpus=1\)"):
        config.resources(num_gpus=1)
    with pytest.raises(ConfigError, match=r"offline_data\(input_\).+does not read or write"):
        config.offline_data(input_="/tmp/cartpole.json")


def test_model_config_dict_is_rllib_240s_deprecated_name_of_model_config() -> None:
    config = PPOConfig().environment("CartPole-v1")
    with pytest.warns(
        DeprecationWarning,
        match=r"`AlgorithmConfig.rl_module\(model_config_dict=..\)` has been deprecated. "
        r"Use `AlgorithmConfig.rl_module\(model_config=..\)`",
    ):
        config.rl_module(model_config_dict={"fcnet_hiddens": [8], "uses_new_env_runners": True})
    assert config.model_config["fcnet_hiddens"] == [8]
    config.validate()
    with config.build_algo() as algo:
        assert algo.train()["training_iteration"] == 1
