"""``config.is_atari`` answers as RLlib's: False unless the env is ALE's or it was set."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest

from hookbus.runners import PPOConfig


def make_cartpole(env_config: Any) -> gym.Env[Any, Any]:
    return gym.make("CartPole-v1")


@pytest.mark.parametrize(
    "env",
    [None, make_cartpole, "CartPole-v1", "no_such_module_here:Nothing-v0", "NoSuchEnv-v0"],
)
def test_is_atari_is_false_for_an_env_that_is_not_ales(env: object) -> None:
    config = PPOConfig()
    if env is not None:
        config.environment(env)
    assert config.is_atari is False


def test_is_atari_set_by_the_user_wins() -> None:
    config = PPOConfig().environment(make_cartpole, is_atari=True)
    assert config.is_atari is True
    config.is_atari = False  # an attribute, as RLlib's
    assert config.is_atari is False
    config.environment("CartPole-v1", is_atari=True)  # whatever the env
    assert config.is_atari is True
    assert config.environment(is_atari=None).is_atari is False  # unset: decided again
