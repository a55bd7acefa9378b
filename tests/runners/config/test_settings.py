"""Typed config sections: methods, structs and decoding from data agree, with clear errors."""

from __future__ import annotations

import inspect
import pickle
import typing
from pathlib import Path
from typing import Annotated, Any

import msgspec
import pytest

from hookbus.kernel import ConfigError
from hookbus.runners import AlgorithmConfig, DQNConfig, PPOConfig
from hookbus.runners.algorithms.ppo._settings import PPOTrainingSettings
from hookbus.runners.app._cli import main
from hookbus.runners.config import (
    NOT_SET,
    Setting,
    SettingInfo,
    int_check,
    section,
    settings_markdown,
)

CONFIGS = [AlgorithmConfig, PPOConfig, DQNConfig]
RLLIB_KEYS = {
    "lambda_": "lambda",
    "custom_evaluation_function": "custom_eval_function",
    "create_env_on_local_worker": "create_env_on_driver",
}
"""The settings whose key in RLlib's flat ``to_dict()`` is another name (RLlib 2.60's
``AlgorithmConfig.to_dict`` and ``_translate_special_keys``)."""


def infos(config_class: type[AlgorithmConfig[Any]]) -> list[SettingInfo]:
    return list(config_class.setting_infos())


@pytest.mark.parametrize("config_class", CONFIGS)
def test_every_setting_derives_from_its_one_declaration(
    config_class: type[AlgorithmConfig[Any]],
) -> None:
    config = config_class()
    data, flat = config.to_dict_by_section(), config.to_dict()
    for info in infos(config_class):
        # The builder keyword: in the section method's signature, with the declared type.
        method = getattr(config_class, info.section)
        parameter = inspect.signature(method).parameters[info.name]
        assert parameter.annotation == info.type, info.name
        assert parameter.default is NOT_SET
        assert typing.get_type_hints(method)[info.name] == info.type
        # The attribute, with the declared default; to_dict by section.
        # Derived properties: "auto" fragments, and is_atari decided as RLlib's when unset.
        if info.name not in ("rollout_fragment_length", "is_atari"):
            assert getattr(config, info.name) == info.default, info.name
        assert data[info.section][info.name] == info.default
        assert flat[RLLIB_KEYS.get(info.name, info.name)] == info.default  # RLlib's flat dict
        # The name in a config file, --set and params.json: "section.name" and the bare name.
        if not info.holds_code:
            again = config_class().update_from_dict({f"{info.section}.{info.name}": info.default})
            assert again.to_dict_by_section()[info.section][info.name] == info.default
            assert config_class()._locate(info.name, "") == (info.section, info.name)
        # The doc row.
        assert info.doc, f"{info.name} has no doc line"
        assert f"| `{info.name}` |" in DOC, f"{info.name} is not in docs/settings.md"


DOC = (Path(__file__).parents[3] / "docs" / "settings.md").read_text()


def test_docs_settings_page_is_made_from_the_declarations() -> None:
    expected = settings_markdown(AlgorithmConfig, [PPOConfig, DQNConfig])
    assert DOC == expected, "regenerate it: hookbus settings --markdown > docs/settings.md"


def test_the_settings_command_lists_them(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["settings", "--algo", "dqn"]) == 0
    out = capsys.readouterr().out
    assert "training.n_step = 3\n" in out
    assert (
        "training.lr = 0.0005\n    the optimizer's learning rate; takes a finite number > 0" in out
    )
    assert main(["settings", "--markdown"]) == 0
    assert capsys.readouterr().out == DOC


class KnobTraining(PPOTrainingSettings, frozen=True):
    knob: Annotated[int, Setting("a knob for this test", int_check(2))] = 3  # the one line


class KnobConfig(PPOConfig):
    training = section(KnobTraining)


def test_adding_a_setting_is_one_declaration() -> None:
    config = KnobConfig().environment("CartPole-v1")
    assert config.knob == 3
    assert config.training(knob=5, lr=0.1).knob == 5
    assert config.lr == 0.1
    config.knob = 4  # an attribute, as RLlib's config has
    assert config.to_dict_by_section()["training"]["knob"] == 4
    assert config.to_dict()["knob"] == 4
    assert KnobConfig().update_from_dict({"training.knob": 7}).knob == 7
    assert KnobConfig().update_from_dict({"knob": 8}).knob == 8
    assert pickle.loads(pickle.dumps(config)).knob == 4
    with pytest.raises(TypeError, match=r"training\(\) got an unexpected keyword argument 'knb'"):
        config.training(knb=1)
    with pytest.raises(ConfigError, match="knob must be an int >= 2, got 1"):
        config.training(knob=1).validate()
    with pytest.raises(ConfigError, match=r"training\.knob: expected `int`, got `str`"):
        KnobConfig().update_from_dict({"knob": "many"})
    assert "- ``knob`` (3): a knob for this test" in (KnobConfig.training.__doc__ or "")
    rows = settings_markdown(AlgorithmConfig, [KnobConfig])
    assert "| `training()` | `knob` | `int` | `3` | an int >= 2 | a knob for this test |" in rows
    assert "knob" not in PPOConfig().to_dict_by_section()["training"]


def test_workers_get_data_settings_as_msgpack_and_only_objects_pickled() -> None:
    config = (
        PPOConfig()
        .environment(Creator, env_config={"size": (4, 4)})
        .training(lr=0.01)
        .env_runners(num_env_runners=2)
    )
    state = config.__getstate__()
    data = msgspec.msgpack.decode(state["_data"])
    assert data["training"]["lr"] == 0.01
    assert data["env_runners"]["num_env_runners"] == 2
    pickled = {name for section in state["_objects"].values() for name in section}
    assert pickled == {i.name for i in infos(PPOConfig) if i.holds_objects}
    assert "lr" not in pickled
    assert {"env", "env_config"} <= pickled
    again = pickle.loads(pickle.dumps(config))
    assert again.to_dict() == config.to_dict()
    assert again.env_config == {"size": (4, 4)}  # the user's objects as they were
    assert again.env is Creator


class Creator:
    """A stand-in env creator (code: pickled by reference)."""


def test_algorithms_override_defaults_and_add_settings() -> None:
    assert PPOConfig().lr == 1e-3
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


@pytest.mark.parametrize("view", ["to_dict", "to_dict_by_section"])
def test_to_dict_round_trips_through_update_from_dict(view: str) -> None:
    config = PPOConfig().environment("CartPole-v1").training(lr=1e-3, vf_clip_param=10.0)
    settings = getattr(config, view)()
    settings.pop("callbacks", None)  # classes (the base class when none set), not data
    data = msgspec.json.decode(msgspec.json.encode(settings))
    again = PPOConfig().update_from_dict(data)
    assert again.to_dict() == config.to_dict()
    assert again.to_dict_by_section() == config.to_dict_by_section()


def test_reporting_settings_cannot_be_overridden_for_evaluation() -> None:
    config = PPOConfig().evaluation(evaluation_config={"logdir": "/tmp/x"})
    with pytest.raises(ConfigError, match="evaluation_config cannot override 'logdir'"):
        config.get_evaluation_config_object()
