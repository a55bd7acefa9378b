"""``config.to_dict()`` is RLlib's flat dict; ``from_dict``/``update_from_dict`` take it back.

RLlib 2.60's ``AlgorithmConfig.to_dict()`` (``rllib/algorithms/algorithm_config.py``) is
one flat dict of the config's attributes, with ``lambda``, ``callbacks``,
``custom_eval_function`` and ``create_env_on_driver`` as its keys for ``lambda_``,
``callbacks_class``, ``custom_evaluation_function`` and ``create_env_on_local_worker``,
and a ``callbacks_on_<hook>`` key per hook; its ``update_from_dict`` takes those keys
back (``_translate_special_keys``).
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from hookbus.kernel import Callback, ConfigError
from hookbus.runners import DQNConfig, PPOConfig


class First(Callback):
    def on_episode_end(self, **kwargs: Any) -> None:
        pass


class Second(Callback):
    def on_train_result(self, **kwargs: Any) -> None:
        pass


def on_result(**kwargs: Any) -> None:
    pass


def on_end(**kwargs: Any) -> None:
    pass


def configured() -> PPOConfig:
    return (
        PPOConfig()
        .environment("CartPole-v1", env_config={"size": 3})
        .env_runners(num_env_runners=2)
        .training(lr=1e-3, lambda_=0.9, train_batch_size=512)
        .evaluation(custom_evaluation_function=on_result)
        .debugging(logger_config={"type": "NoopLogger"}, seed=4)
        .callbacks([First], on_train_result=on_result, on_error="log")
    )


def test_to_dict_is_one_flat_dict_with_rllibs_keys() -> None:
    settings = configured().to_dict()
    assert settings["lr"] == 1e-3
    assert settings["train_batch_size"] == 512
    assert settings["num_env_runners"] == 2
    assert settings["env"] == "CartPole-v1"
    assert settings["env_config"] == {"size": 3}
    assert settings["seed"] == 4
    assert settings["logger_config"] == {"type": "NoopLogger"}  # where RLlib has it
    # RLlib's own names for what hookbus's attributes call otherwise
    assert settings["lambda"] == 0.9
    assert settings["custom_eval_function"] is on_result
    assert settings["create_env_on_driver"] is False
    assert settings["callbacks"] == [First]
    assert settings["callbacks_on_train_result"] == [on_result]
    assert settings["callbacks_on_episode_end"] is None  # every hook has its key
    assert settings["callbacks_on_error"] == "log"
    for name in ("lambda_", "custom_evaluation_function", "training", "environment"):
        assert name not in settings


def test_from_dict_rebuilds_the_config_from_the_flat_form() -> None:
    config = configured()
    again = PPOConfig.from_dict(config.to_dict())
    assert again.to_dict() == config.to_dict()
    assert (again.lambda_, again.lr, again.num_env_runners) == (0.9, 1e-3, 2)
    assert again.callbacks_class == [First]
    assert again.callbacks_per_hook == {"on_train_result": [on_result]}
    assert again.bus_options.on_error == "log"
    assert again.custom_evaluation_function is on_result


def test_the_flat_form_round_trips_through_json_for_data_settings() -> None:
    config = DQNConfig().environment("CartPole-v1").training(lr=1e-2, n_step=3)
    # Every setting but "callbacks", which holds classes: with none set, the base class (as
    # RLlib's holds its default class), so that Tune's restore puts a new config's in.
    settings = {k: v for k, v in config.to_dict().items() if k != "callbacks"}
    data = msgspec.json.decode(msgspec.json.encode(settings))
    assert DQNConfig().update_from_dict(data).to_dict() == config.to_dict()


def test_update_from_dict_takes_rllibs_renamed_keys() -> None:
    config = PPOConfig().update_from_dict(
        {"lambda": 0.5, "custom_eval_function": on_result, "create_env_on_driver": True}
    )
    assert config.lambda_ == 0.5
    assert config.custom_evaluation_function is on_result
    assert config.create_env_on_local_worker is True
    with pytest.raises(ConfigError, match="unknown setting 'lambda'"):  # PPO's, not DQN's
        DQNConfig().update_from_dict({"lambda": 0.5})


def test_a_flat_callbacks_key_changes_that_part_only() -> None:
    config = PPOConfig().callbacks([First], on_train_result=on_result, on_error="log")
    config.update_from_dict({"callbacks_on_episode_end": [on_end]})
    assert config.callbacks_class == [First]
    assert config.callbacks_per_hook == {"on_train_result": [on_result], "on_episode_end": [on_end]}
    assert config.bus_options.on_error == "log"
    config.update_from_dict({"callbacks": Second, "callbacks_on_train_result": None})
    assert config.callbacks_class == [Second]  # RLlib's dicts hold a class; a list serves too
    assert config.callbacks_per_hook == {"on_episode_end": [on_end]}
    config.update_from_dict({"callbacks": None})  # as in RLlib: no class of the user's left
    assert config.callbacks_class == []
    with pytest.raises(ConfigError, match="on_error"):
        config.update_from_dict({"callbacks_on_error": "shrug"})


def test_the_sectioned_view_stays_and_still_loads() -> None:
    config = configured()
    sections = config.to_dict_by_section()
    assert sections["training"]["lr"] == 1e-3
    assert sections["debugging"]["logger_config"] == {"type": "NoopLogger"}
    assert sections["callbacks"]["callbacks_class"] == [First]
    again = PPOConfig().update_from_dict(sections)
    assert again.to_dict() == config.to_dict()


def test_callbacks_none_keeps_the_callbacks_keys() -> None:
    # Ray Tune's Tuner.restore(path, param_space=config) wants the keys the first Tuner
    # had; RLlib's example restores after config.callbacks(None) (its default class).
    config = configured()
    keys = set(config.to_dict())
    assert set(config.callbacks(None).to_dict()) == keys
    # As RLlib's default class: the base class, so that Tune puts it in a restored trial.
    assert config.to_dict()["callbacks"] == [Callback]
    assert PPOConfig().update_from_dict(config.to_dict()).callbacks_class == []
    assert set(config.callbacks(Second, on_episode_end=on_end).to_dict()) == keys
    assert set(PPOConfig().to_dict()) == keys
