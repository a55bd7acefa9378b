"""rl_module(model_config=DefaultModelConfig(...)), its dict form and training(model=...)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from hookbus.kernel import ConfigError
from hookbus.runners import DefaultModelConfig, DQNConfig, PPOConfig


def small() -> PPOConfig:
    return (
        PPOConfig()
        .environment("CartPole-v1")
        .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
        .debugging(seed=0)
    )


def test_a_shared_trunk_feeds_linear_policy_and_value_heads() -> None:
    model = DefaultModelConfig(fcnet_hiddens=[16, 8], vf_share_layers=True)
    with small().rl_module(model_config=model).build() as algo:
        module = algo.learner.module
        shapes = {name: p.shape for name, p in module.params.items()}
        algo.train()
    assert shapes == {
        "encoder.w0": (4, 16),
        "encoder.b0": (16,),
        "encoder.w1": (16, 8),
        "encoder.b1": (8,),
        "pi.w0": (8, 2),
        "pi.b0": (2,),
        "vf.w0": (8, 1),
        "vf.b0": (1,),
    }


def test_separate_networks_stay_hookbus_default() -> None:
    with small().build() as algo:
        names = set(algo.learner.module.params)
    assert names == {f"{net}.{p}{i}" for net in ("pi", "vf") for p in "wb" for i in range(3)}


def test_the_dict_forms_merge_key_by_key_rl_module_last() -> None:
    config = small().training(model={"fcnet_hiddens": [8], "fcnet_activation": "relu"})
    config = config.rl_module(model_config={"fcnet_hiddens": [12, 6]})
    with config.build() as algo:
        module = algo.learner.module
        assert module.pi.sizes == (4, 12, 6, 2)
        assert module.pi.activation == "relu"  # training(model=...)'s, not overridden
        x = np.linspace(-3, 3, 16, dtype=np.float32).reshape(4, 4)
        hidden = np.maximum(x @ module.pi.params["pi.w0"] + module.pi.params["pi.b0"], 0)
        assert (hidden == 0).any()  # relu: negative pre-activations are cut to 0


def test_a_default_model_config_is_kept_as_data_and_pickles() -> None:
    config = small().rl_module(model_config=DefaultModelConfig(fcnet_activation=None))
    assert config.model_config == {
        "fcnet_hiddens": [64, 64],
        "fcnet_activation": "linear",
        "vf_share_layers": False,
    }
    assert pickle.loads(pickle.dumps(config)).model_config == config.model_config
    assert DefaultModelConfig(fcnet_hiddens=(3,)) == DefaultModelConfig(fcnet_hiddens=[3])


def test_dqn_takes_the_activation() -> None:
    config = (
        DQNConfig()
        .environment("CartPole-v1")
        .rl_module(model_config={"fcnet_hiddens": [8], "fcnet_activation": "relu"})
    )
    with config.build() as algo:
        assert algo.learner.module.q.activation == "relu"
        assert algo.learner.module.q.sizes[1] == 8


@pytest.mark.parametrize(
    ("model", "match"),
    [
        (
            {"conv_filters": [[16, 4, 2]], "use_lstm": True},
            r"'conv_filters', 'use_lstm' describe RLlib's torch modules, which hookbus's numpy "
            r"MLPs do not have; supported: fcnet_hiddens, fcnet_activation, vf_share_layers",
        ),
        (
            {"fcnet_hidden": [8]},
            r"unknown model setting\(s\) 'fcnet_hidden' \(did you mean 'fcnet_hiddens'\?\)",
        ),
        ({"fcnet_activation": "swish"}, r"fcnet_activation 'swish' is not one of hookbus's"),
        (
            {"fcnet_hiddens": [8, 0]},
            r"fcnet_hiddens must be a list of 1 to 32 layer sizes, each an int in \[1, 8192\]",
        ),
        ({"vf_share_layers": "yes"}, r"vf_share_layers must be True or False, got 'yes'"),
    ],
)
def test_bad_model_settings_are_one_error_naming_them(model: dict, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        small().rl_module(model_config=model).validate()
    with pytest.raises(ConfigError, match=match):
        small().training(model=model).validate()


def test_default_model_config_refuses_torch_settings_by_name() -> None:
    with pytest.raises(ConfigError, match=r"DefaultModelConfig: 'conv_filters' describe RLlib"):
        DefaultModelConfig(conv_filters=[[16, 4, 2]])
    with pytest.raises(
        ConfigError,
        match=r"model_config must be a dict of model settings or a DefaultModelConfig, got \[64\]",
    ):
        small().rl_module(model_config=[64]).validate()
