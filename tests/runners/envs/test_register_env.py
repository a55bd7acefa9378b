"""register_env, get_trainable_cls and Algorithm(config=..., env=...): RLlib's ways in."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from hookbus.kernel import ConfigError
from hookbus.runners import (
    DQN,
    PPO,
    DQNConfig,
    PPOConfig,
    get_trainable_cls,
    register_env,
)

sys.path.insert(0, str(Path(__file__).parents[1]))  # so worker processes import the helpers
import tune_helpers

SMALL = {"train_batch_size": 200, "minibatch_size": 50, "num_epochs": 1}


def test_a_registered_name_trains_and_its_creator_gets_the_env_context() -> None:
    register_env("ctx_cartpole", tune_helpers.make_context_cartpole)
    config = (
        PPOConfig()
        .environment("ctx_cartpole", env_config={"tag": "inline"})
        .training(**SMALL)
        .callbacks(tune_helpers.RecordCreation)
    )
    with config.build() as algo:
        result = algo.train()
    runners = result["env_runners"]
    assert runners["env_tag"] == ["inline"] * len(runners["env_tag"])
    assert set(runners["env_pid"]) == {os.getpid()}
    assert set(runners["env_worker_index"]) == {0}


def test_a_registered_creator_ships_to_worker_processes_that_never_registered_it() -> None:
    register_env("ctx_cartpole_proc", tune_helpers.make_context_cartpole)
    config = (
        PPOConfig()
        .environment("ctx_cartpole_proc", env_config={"tag": "proc"})
        .env_runners(num_env_runners=2, backend="process")
        .training(**SMALL)
        .callbacks(tune_helpers.RecordCreation)
    )
    with config.build() as algo:
        result = algo.train()
    runners = result["env_runners"]
    assert set(runners["env_tag"]) == {"proc"}
    assert os.getpid() not in set(runners["env_pid"])
    assert set(runners["env_worker_index"]) == {1, 2}


@pytest.mark.usefixtures("ray_cluster")
def test_a_registered_creator_ships_to_ray_actors() -> None:
    register_env("ctx_cartpole_ray", tune_helpers.make_context_cartpole)
    config = (
        PPOConfig()
        .environment("ctx_cartpole_ray", env_config={"tag": "ray"})
        .env_runners(num_env_runners=2, backend="ray", num_cpus_per_env_runner=0.5)
        .training(**SMALL)
        .callbacks(tune_helpers.RecordCreation)
    )
    with config.build() as algo:
        result = algo.train()
    runners = result["env_runners"]
    assert set(runners["env_tag"]) == {"ray"}
    assert os.getpid() not in set(runners["env_pid"])
    assert set(runners["env_worker_index"]) == {1, 2}


def test_a_name_registered_after_the_setting_is_found_at_build() -> None:
    config = PPOConfig().environment("late_cartpole").training(**SMALL)
    register_env("late_cartpole", tune_helpers.make_context_cartpole)
    with config.build() as algo:
        assert algo.train()["env_runners"]["num_episodes"] >= 1
    assert repr(algo.config.env) == "RegisteredEnv('late_cartpole')"


def test_names_registered_with_ray_tune_are_found() -> None:
    from ray import tune

    tune.register_env("tune_registered_cartpole", tune_helpers.make_context_cartpole)
    config = PPOConfig().environment("tune_registered_cartpole").training(**SMALL)
    with config.build() as algo:
        assert algo.train()["env_runners"]["num_episodes"] >= 1


def test_a_checkpoint_keeps_a_registered_env_by_name(tmp_path: Path) -> None:
    register_env("ckpt_cartpole", tune_helpers.make_context_cartpole)
    config = PPOConfig().environment("ckpt_cartpole").training(**SMALL)
    with config.build() as algo:
        algo.train()
        algo.save_to_path(tmp_path)
    with PPO.from_checkpoint(tmp_path) as restored:
        assert restored.training_iteration == 1
        assert restored.train()["training_iteration"] == 2


@pytest.mark.parametrize(
    ("name", "creator", "match"),
    [
        ("", tune_helpers.make_context_cartpole, r"non-empty str name, got ''"),
        ("no_creator", 42, r"register_env\('no_creator', \.\.\.\) needs a callable.*got 42"),
    ],
)
def test_register_env_refuses_bad_input(name: str, creator: Any, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        register_env(name, creator)


def test_an_unknown_name_says_where_names_come_from() -> None:
    with pytest.raises(ConfigError, match=r"unknown env id 'never_registered'.*register_env"):
        PPOConfig().environment("never_registered").validate()


def test_get_trainable_cls_gives_the_algorithm_and_its_default_config() -> None:
    assert get_trainable_cls("PPO") is PPO
    assert get_trainable_cls("DQN") is DQN
    assert isinstance(get_trainable_cls("PPO").get_default_config(), PPOConfig)
    assert isinstance(DQN.get_default_config(), DQNConfig)
    with pytest.raises(ConfigError, match=r"unknown algorithm 'PPOO'; hookbus has DQN, PPO"):
        get_trainable_cls("PPOO")


def test_algorithm_takes_a_dict_of_rllib_keys_and_an_env() -> None:
    settings = {"lr": 1e-3, "env_config": {"tag": "dict"}, "num_env_runners": 0, **SMALL}
    register_env("dict_cartpole", tune_helpers.make_context_cartpole)
    with PPO(config=settings, env="dict_cartpole") as algo:
        assert algo.config.lr == 1e-3
        assert algo.config.env_config == {"tag": "dict"}
        assert algo.train()["training_iteration"] == 1


def test_algorithm_takes_a_config_and_a_gymnasium_id_or_class() -> None:
    config = PPOConfig().training(**SMALL)
    with PPO(config=config, env="CartPole-v1") as algo:
        assert algo.train()["env_runners"]["num_env_steps_sampled"] == 200
    assert config.env is None  # the caller's config is not changed
    with PPO(config=config, env=tune_helpers.LevelCartPole) as algo:
        assert algo.train()["training_iteration"] == 1


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"config": 3}, ConfigError, r"an AlgorithmConfig, a dict of settings or None, got 3"),
        ({"config": {"lrr": 1}}, ConfigError, r"unknown setting 'lrr' \(did you mean 'lr'\?\)"),
        ({"config": {"lr": -1.0}, "env": "CartPole-v1"}, ConfigError, r"lr must be .*got -1.0"),
        ({"config": None}, ConfigError, r"no env set"),
        ({"config": None, "envv": "CartPole-v1"}, TypeError, r"unexpected keyword.*'envv'"),
    ],
)
def test_algorithm_refuses_bad_arguments(
    kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        PPO(**kwargs)
