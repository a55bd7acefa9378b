"""Envs named by string: gymnasium's "module:id", "module:Class" and "path/to/file.py:Class"."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

from hookbus.kernel import ConfigError
from hookbus.runners import PPOConfig
from hookbus.runners.app._cli import main

ENV_FILE = """
from gymnasium.envs.classic_control import CartPoleEnv


class ShortCartPole(CartPoleEnv):
    def __init__(self, config=None):
        super().__init__()
        self.limit = (config or {}).get("limit", 10)
        self.steps = 0

    def reset(self, **kwargs):
        self.steps = 0
        return super().reset(**kwargs)

    def step(self, action):
        self.steps += 1
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, reward, terminated, truncated or self.steps >= self.limit, info
"""

REGISTERING_MODULE = """
import gymnasium as gym

gym.register(
    "HookbusTestShortCart-v0",
    entry_point="gymnasium.envs.classic_control:CartPoleEnv",
    max_episode_steps=7,
)
"""


@pytest.fixture
def env_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A file with an Env class, and an importable module that registers an id."""
    (tmp_path / "short_env.py").write_text(textwrap.dedent(ENV_FILE))
    package = tmp_path / "hookbus_test_envs"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "registry.py").write_text(textwrap.dedent(REGISTERING_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    for name in ["short_env", "hookbus_test_envs", "hookbus_test_envs.registry"]:
        sys.modules.pop(name, None)
    gym.registry.pop("HookbusTestShortCart-v0", None)


def small(env: str, env_config: dict[str, int] | None = None) -> PPOConfig:
    return (
        PPOConfig()
        .environment(env, env_config={"limit": 5} if env_config is None else env_config)
        .training(train_batch_size=100, minibatch_size=50, num_epochs=1)
        .debugging(seed=0)
    )


@pytest.mark.parametrize("backend", ["inline", "process"])
def test_a_file_path_and_class_name_an_env(env_sources: Path, backend: str) -> None:
    config = small("short_env.py:ShortCartPole").env_runners(
        num_env_runners=0 if backend == "inline" else 1, backend=backend
    )
    with config.build() as algo:
        result = algo.train()
    # The class got the EnvContext: episodes end at env_config's limit.
    assert result["env_runners"]["episode_len_mean"] <= 5


def test_gymnasiums_module_and_id_form_imports_the_module(env_sources: Path) -> None:
    with small("hookbus_test_envs.registry:HookbusTestShortCart-v0", {}).build() as algo:
        result = algo.train()
    assert result["env_runners"]["episode_len_mean"] <= 7  # the registered max_episode_steps


def test_module_and_class_form(env_sources: Path) -> None:
    with small("short_env:ShortCartPole").build() as algo:
        assert algo.train()["env_runners"]["episode_len_mean"] <= 5


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ("missing.py:Env", r"env 'missing\.py:Env': no such file 'missing\.py'"),
        ("no_such_module_xyz:Env-v0", r"cannot import 'no_such_module_xyz'"),
        (
            "short_env.py:Nope",
            r"'short_env\.py' neither registers a gymnasium id 'Nope' nor has an Env class",
        ),
        ("CartPol-v1", r"unknown env id 'CartPol-v1'.*'module:EnvId'"),
    ],
)
def test_a_bad_env_string_is_one_clear_error(env_sources: Path, env: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        small(env).validate()


def test_the_cli_takes_both_forms(env_sources: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for env in ["short_env.py:ShortCartPole", "hookbus_test_envs.registry:HookbusTestShortCart-v0"]:
        small = ["--set", "train_batch_size=200", "--set", "minibatch_size=50"]
        assert main(["train", "--env", env, "--iterations", "1", "--seed", "0", *small]) == 0
    assert main(["train", "--env", "missing.py:Env", "--iterations", "1"]) == 2
    assert "no such file 'missing.py'" in capsys.readouterr().err
