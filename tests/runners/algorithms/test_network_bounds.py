"""A network's size is bounded wherever one is asked for, before a weight is allocated.

Each layer's width and their number are bounded by the config's check; their product is
bounded too (``MAX_PARAMETERS``, 20 million weights and biases a module), by the config
for what it knows (the weights between hidden layers) and by the module for the rest
(inputs and outputs, which the spaces give). The sizes asked for here would take from
gigabytes to terabytes: a refusal that came after allocating would be a MemoryError or
minutes of initialising, not a ConfigError in milliseconds.
"""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest

from hookbus.kernel import ConfigError
from hookbus.runners import (
    DefaultModelConfig,
    DQNConfig,
    DQNModule,
    PPOConfig,
    PPOModule,
    RLModuleSpec,
)

CARTPOLE_OBS = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
TWO_ACTIONS = gym.spaces.Discrete(2)
HIDDEN_ALONE = r"fcnet_hiddens \[8192\] \* 32 asks for 2,080,628,736 parameters between its "


def cartpole_ppo() -> PPOConfig:
    return PPOConfig().environment("CartPole-v1")


BOUND = r"more than the 20,000,000 a module may have \(MAX_PARAMETERS\)"


@pytest.mark.parametrize(
    "ask",
    [
        lambda: cartpole_ppo().rl_module(model_config={"fcnet_hiddens": [8192] * 32}).validate(),
        lambda: cartpole_ppo().training(model={"fcnet_hiddens": [8192] * 32}).validate(),
        lambda: (
            DQNConfig()
            .environment("CartPole-v1")
            .training(model={"fcnet_hiddens": [8192] * 32})
            .validate()
        ),
        lambda: DefaultModelConfig(fcnet_hiddens=[8192] * 32),
    ],
    ids=["rl_module", "training_model", "dqn", "DefaultModelConfig"],
)
def test_a_config_asking_for_billions_of_weights_is_refused(ask: object) -> None:
    with pytest.raises(ConfigError, match=HIDDEN_ALONE + "hidden layers alone, " + BOUND):
        ask()  # type: ignore[operator]


def test_widths_within_the_bound_still_pass() -> None:
    DefaultModelConfig(fcnet_hiddens=[4096, 4096])  # 16.8 million: one network's worth
    cartpole_ppo().rl_module(model_config={"fcnet_hiddens": [1024] * 16}).validate()


@pytest.mark.parametrize(
    ("module", "spaces", "hiddens", "vf_share", "message"),
    [
        # A huge action space: the output layer alone is 64 * 10**9 weights.
        (PPOModule, (CARTPOLE_OBS, gym.spaces.Discrete(10**9)), [64], False,
         r"a PPOModule of fcnet_hiddens \[64\] on 4 inputs and 1,000,000,000 outputs would "
         r"have 65,000,000,705 parameters"),
        # A huge observation: the first layer is 10**6 * 64 per network.
        (PPOModule, (gym.spaces.Box(0.0, 1.0, (1000, 1000), np.float32), TWO_ACTIONS), [64],
         False, r"a PPOModule of fcnet_hiddens \[64\] on 1,000,000 inputs and 2 outputs"),
        # Two networks of [4096, 4096]: each within the bound, together past it.
        (PPOModule, (CARTPOLE_OBS, TWO_ACTIONS), [4096, 4096], False,
         r"a PPOModule of fcnet_hiddens \[4096\] \* 2 on 4 inputs and 2 outputs would have "
         r"33,615,875 parameters"),
        (DQNModule, (CARTPOLE_OBS, gym.spaces.Discrete(10**8)), [512], True,
         r"a DQNModule of fcnet_hiddens \[512\] on 4 inputs and 100,000,001 outputs"),
    ],
    ids=["ppo_actions", "ppo_observations", "ppo_two_networks", "dqn_actions"],
)  # fmt: skip
def test_a_module_too_large_for_its_spaces_is_refused_before_allocating(
    module: type, spaces: tuple[object, object], hiddens: list[int], vf_share: bool,
    message: str,
) -> None:  # fmt: skip
    flag = {"vf_share_layers": vf_share} if module is PPOModule else {"dueling": vf_share}
    with pytest.raises(ConfigError, match=message + ".*" + BOUND + "; nothing was allocated"):
        module(*spaces, model_hiddens=hiddens, **flag)


def test_a_module_within_the_bound_is_built() -> None:
    module = PPOModule(CARTPOLE_OBS, TWO_ACTIONS, model_hiddens=[256, 256])
    assert sum(p.size for p in module.params.values()) == 2 * (5 * 256 + 257 * 256) + 257 * 3


def test_a_module_spec_is_bounded_as_a_config_is() -> None:
    spec = RLModuleSpec(
        module_class=PPOModule,
        observation_space=CARTPOLE_OBS,
        action_space=gym.spaces.Discrete(10**9),
        model_config={"fcnet_hiddens": [64]},
    )
    with pytest.raises(ConfigError, match=re.escape("1,000,000,000 outputs")):
        spec.build()


def test_an_algorithm_on_an_env_with_a_huge_action_space_is_refused_when_built() -> None:
    class ManyActions(gym.Env[np.ndarray, int]):
        observation_space = CARTPOLE_OBS
        action_space = gym.spaces.Discrete(10**9)

    config = PPOConfig().environment(ManyActions).training(train_batch_size=64, minibatch_size=32)
    with pytest.raises(ConfigError, match="1,000,000,000 outputs would have"):
        config.build()
