"""Typed config sections: methods, structs and decoding from data agree, with clear errors."""

from __future__ import annotations

import inspect
import typing
from typing import Any

import msgspec
import pytest

from hookbus.kernel import ConfigError
from hookbus.runners import AlgorithmConfig, DQNConfig, PPOConfig

CONFIGS = [AlgorithmConfig, PPOConfig, DQNConfig]


def section_cases() -> list[tuple[type[AlgorithmConfig[Any]], str]]:
    return [(cls, section) for cls in CONFIGS for section in cls.sections]


@pytest.mark.parametrize(("config_class", "section"), section_cases())
def test_each_section_method_takes_exactly_its_structs_settings_with_their_types(
    config_class: type[AlgorithmConfig[Any]], section: str
) -> None:
    struct = config_class.sections[section]
    method = getattr(config_class, section)
    parameters = dict(inspect.signature(method).parameters)
    del parameters["self"]
    assert list(parameters) == list(struct.__struct_fields__)
    hints = typing.get_type_hints(method)
    field_types = {f.name: f.type for f in msgspec.structs.fields(struct)}
    for name in parameters:
        # Settings that hold code are Any in the struct (a file names only data).
        if field_types[name] is not Any:
            # The method may take more (a logdir as os.PathLike), never less.
            taken = set(typing.get_args(hints[name]) or [hints[name]])
            assert set(typing.get_args(field_types[name]) or [field_types[name]]) <= taken, name
        assert parameters[name].kind is not inspect.Parameter.VAR_KEYWORD


@pytest.mark.parametrize("config_class", CONFIGS)
def test_every_setting_is_a_typed_attribute_with_the_structs_default(
    config_class: type[AlgorithmConfig[Any]],
) -> None:
    config = config_class()
    # Declared (for mypy and editors), not only set in __init__.
    hints = {name for cls in config_class.__mro__ for name in vars(cls).get("__annotations__", {})}
    hints |= {
        name
        for cls in config_class.__mro__
        for name, v in vars(cls).items()
        if isinstance(v, property)
    }
    for struct in config_class.sections.values():
        for field in msgspec.structs.fields(struct):
            assert field.name in hints, field.name
            default = struct().__getattribute__(field.name)
            if field.name != "rollout_fragment_length":  # a derived property ("auto")
                assert getattr(config, field.name) == default, field.name


def test_algorithms_override_defaults_and_add_settings() -> None:
    assert PPOConfig().lr == 3e-4
    assert DQNConfig().lr == 5e-4
    assert DQNConfig().evaluation_config == {"explore": False}
    assert PPOConfig().evaluation_config is None
    assert "clip_param" in PPOConfig.sections["training"].__struct_fields__
    assert "clip_param" not in DQNConfig.sections["training"].__struct_fields__
    # Mutable defaults are never shared between configs.
    a, b = PPOConfig(), PPOConfig()
    a.model["fcnet_hiddens"].append(8)
    assert b.model == {"fcnet_hiddens": [64, 64]}


def test_update_from_dict_takes_sections_flat_names_and_dotted_names() -> None:
    config = PPOConfig().update_from_dict(
        {
            "environment": {"env": "CartPole-v1"},
            "training": {"lr": 1, "num_epochs": 3},  # a TOML integer for a float setting
            "seed": 7,
            "env_runners.num_envs_per_env_runner": 2,
        }
    )
    assert config.env == "CartPole-v1"
    assert config.lr == 1.0
    assert isinstance(config.lr, float)
    assert (config.num_epochs, config.seed, config.num_envs_per_env_runner) == (3, 7, 2)


def test_update_from_dict_goes_through_the_section_method() -> None:
    config = DQNConfig().update_from_dict({"replay_buffer_config": {"capacity": 10}})
    # DQN's training() merges a buffer config of the same type, as RLlib does.
    assert config.replay_buffer_config["type"] == "PrioritizedReplayBuffer"
    assert config.replay_buffer_config["capacity"] == 10
    assert config.replay_buffer_config["alpha"] == 0.6


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"lrr": 0.1}, r"^run\.toml: unknown setting 'lrr' \(did you mean 'lr'\?\)"),
        ({"training": {"lrr": 0.1}}, r"unknown training\(\) setting 'lrr' \(did you mean 'lr'\?\)"),
        ({"training.lrr": 0.1}, r"unknown training\(\) setting 'lrr'"),
        ({"training": {"lr": "fast"}}, r"^run\.toml: training\.lr: expected `float`, got `str`$"),
        ({"num_env_runners": True}, r"env_runners\.num_env_runners: expected `int`, got `bool`"),
        ({"training": 3}, r"section 'training' must be a table of settings, got 3"),
        ({"evaluation_duration_unit": "hours"}, r"evaluation\.evaluation_duration_unit"),
        ({"clip_param": 0.1}, r"unknown setting 'clip_param'"),  # PPO's, not DQN's
    ],
)
def test_bad_data_is_one_clear_error_naming_the_setting(data: dict[str, Any], message: str) -> None:
    config = DQNConfig() if "clip_param" in data else PPOConfig()
    before = config.to_dict()
    with pytest.raises(ConfigError, match=message):
        config.update_from_dict(data, where="run.toml")
    assert config.to_dict() == before


def test_to_dict_round_trips_through_update_from_dict() -> None:
    config = PPOConfig().environment("CartPole-v1").training(lr=1e-3, vf_clip_param=10.0)
    data = msgspec.json.decode(msgspec.json.encode(config.to_dict()))
    again = PPOConfig().update_from_dict(data)
    assert again.to_dict() == config.to_dict()


def test_reporting_settings_cannot_be_overridden_for_evaluation() -> None:
    config = PPOConfig().evaluation(evaluation_config={"logdir": "/tmp/x"})
    with pytest.raises(ConfigError, match="evaluation_config cannot override 'logdir'"):
        config.get_evaluation_config_object()
