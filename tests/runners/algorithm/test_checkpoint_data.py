"""A checkpoint is data: loading one never imports a module that its stored config names.

Each test plants a module whose top-level code leaves a marker file when it is imported,
puts it beside the checkpoint, in the working folder and on ``sys.path``, and rewrites a real
checkpoint's stored env to name it, as an attacker would: the SHA-256 envelope is computed
again, since it guards against damage, not against someone who writes the file. Every way in
(``Algorithm.from_checkpoint``, ``restore_from_path``, ``hookbus evaluate``, ``hookbus train
--restore``) then refuses the value with one line naming it and the way to pass an env, and
nothing was imported. Given ``env=`` / ``config=`` / ``--env``, the same checkpoint loads.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.envs.classic_control import CartPoleEnv

from hookbus.events import codec
from hookbus.kernel import ConfigError
from hookbus.runners import Algorithm, PPOConfig, register_env
from hookbus.runners.app._cli import main

FILE = "algorithm_state.msgpack"

PLANTED = """\
import pathlib

pathlib.Path({marker!r}).write_text("imported")

from gymnasium.envs.classic_control import CartPoleEnv


class {cls}(CartPoleEnv):
    pass
"""

# The forms a stored env could take to name code ("{name}": the planted module's name).
CODE_FORMS = {
    "module": "{name}:EvilEnv",
    "file beside the checkpoint": "{checkpoint}/{name}.py:EvilEnv",
    "file in the working folder": "{name}.py:EvilEnv",
    "gymnasium's module:Id": "{name}:CartPole-v1",
}


def tiny_ppo(env: Any = "CartPole-v1") -> PPOConfig:
    """PPO on ``env`` with an [8] network and 64-step iterations."""
    return (
        PPOConfig()
        .environment(env)
        .training(
            train_batch_size=64, minibatch_size=32, num_epochs=1, model={"fcnet_hiddens": [8]}
        )
        .debugging(seed=0)
    )


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real checkpoint of PPO on CartPole-v1 (saved right after build)."""
    path = tmp_path_factory.mktemp("saved") / "checkpoint"
    with tiny_ppo().build() as algo:
        algo.save_to_path(path)
    return path


@dataclass
class Planted:
    """A module that writes ``marker`` when imported, and a checkpoint to rewrite."""

    name: str
    marker: Path
    checkpoint: Path

    def form(self, template: str) -> str:
        return template.format(name=self.name, checkpoint=self.checkpoint)

    def assert_not_imported(self) -> None:
        assert not self.marker.exists(), f"{self.name} was imported"
        assert self.name not in sys.modules


def plant(directories: list[Path], name: str, cls: str, marker: Path) -> None:
    for directory in directories:
        (directory / f"{name}.py").write_text(PLANTED.format(marker=str(marker), cls=cls))


@pytest.fixture
def planted(saved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Planted]:
    """A planted ``evilenv_<unique>`` module beside a copy of ``saved``, in the working folder
    and on ``sys.path`` (both restored afterwards, as is ``sys.modules``)."""
    name = f"evilenv_{uuid.uuid4().hex[:12]}"
    checkpoint = tmp_path / "checkpoint"
    shutil.copytree(saved, checkpoint)
    marker = tmp_path / f"{name}.imported"
    plant([checkpoint, tmp_path], name, "EvilEnv", marker)
    monkeypatch.syspath_prepend(str(checkpoint))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    yield Planted(name, marker, checkpoint)
    sys.modules.pop(name, None)  # should a test fail after an import, the next starts clean


def rewrite(checkpoint: Path, section: str, setting: str, value: Any) -> None:
    """Set one stored setting and seal the file again, checksum recomputed."""
    envelope = codec.decode_msgpack((checkpoint / FILE).read_bytes())
    state = codec.decode_msgpack(envelope["body"])
    state["config"]["settings"].setdefault(section, {})[setting] = value
    body = codec.encode_msgpack(state)
    sealed = {"version": 2, "sha256": hashlib.sha256(body).digest(), "body": body}
    (checkpoint / FILE).write_bytes(codec.encode_msgpack(sealed))


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    return err


forms = pytest.mark.parametrize("template", CODE_FORMS.values(), ids=CODE_FORMS.keys())


@forms
def test_from_checkpoint_refuses_a_stored_env_that_names_code(
    planted: Planted, template: str
) -> None:
    value = planted.form(template)
    rewrite(planted.checkpoint, "environment", "env", value)
    with pytest.raises(ConfigError) as info:
        Algorithm.from_checkpoint(planted.checkpoint)
    message = str(info.value)
    assert "\n" not in message
    assert f"stores env {value!r}, which names code to import" in message
    assert "pass env= (or config=) to from_checkpoint()" in message
    planted.assert_not_imported()


@forms
def test_from_checkpoint_loads_it_when_the_caller_gives_env_or_config(
    planted: Planted, template: str
) -> None:
    rewrite(planted.checkpoint, "environment", "env", planted.form(template))
    with Algorithm.from_checkpoint(planted.checkpoint, env="CartPole-v1") as algo:
        assert algo.config.env == "CartPole-v1"
        assert algo.config.train_batch_size == 64  # the rest is the checkpoint's
    with Algorithm.from_checkpoint(planted.checkpoint, config=tiny_ppo()) as algo:
        assert algo.training_iteration == 0
    planted.assert_not_imported()


@forms
def test_restore_from_path_never_resolves_the_stored_env(planted: Planted, template: str) -> None:
    # The Algorithm was built from the caller's config: the stored one is not even read.
    rewrite(planted.checkpoint, "environment", "env", planted.form(template))
    with tiny_ppo().build() as algo:
        algo.train()
        algo.restore_from_path(planted.checkpoint)
        assert algo.training_iteration == 0
    planted.assert_not_imported()


@forms
def test_hookbus_evaluate_refuses_it_and_takes_env(
    planted: Planted, template: str, capsys: pytest.CaptureFixture[str]
) -> None:
    value = planted.form(template)
    rewrite(planted.checkpoint, "environment", "env", value)
    assert main(["evaluate", str(planted.checkpoint), "--episodes", "1"]) == 2
    err = one_line(capsys)
    assert err.startswith("hookbus evaluate: error: ")
    assert f"stores env {value!r}, which names code to import" in err
    assert "pass --env" in err
    planted.assert_not_imported()
    argv = ["evaluate", str(planted.checkpoint), "--episodes", "1", "--env", "CartPole-v1"]
    assert main(argv) == 0
    assert "1 episodes: return mean" in capsys.readouterr().out
    planted.assert_not_imported()


@forms
def test_hookbus_train_restore_refuses_it_and_takes_env(
    planted: Planted, template: str, capsys: pytest.CaptureFixture[str]
) -> None:
    value = planted.form(template)
    rewrite(planted.checkpoint, "environment", "env", value)
    assert main(["train", "--restore", str(planted.checkpoint), "--iterations", "1"]) == 2
    err = one_line(capsys)
    assert err.startswith("hookbus train: error: ")
    assert f"stores env {value!r}, which names code to import" in err
    assert "pass --env" in err
    planted.assert_not_imported()
    argv = ["train", "--restore", str(planted.checkpoint), "--iterations", "1"]
    assert main([*argv, "--env", "CartPole-v1"]) == 0
    assert "stopped: training_iteration=1" in capsys.readouterr().out
    planted.assert_not_imported()


def test_an_env_string_the_caller_gives_still_imports_its_code(
    planted: Planted, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The caller's strings name code by design (a script, --env): those are imported.
    rewrite(planted.checkpoint, "environment", "env", planted.form("{name}:EvilEnv"))
    good = f"goodenv_{uuid.uuid4().hex[:12]}"
    marker = tmp_path / f"{good}.imported"
    (tmp_path / "envs").mkdir()
    plant([tmp_path / "envs"], good, "Good", marker)
    given = f"{tmp_path / 'envs' / good}.py:Good"
    try:
        with Algorithm.from_checkpoint(planted.checkpoint, env=given) as algo:
            assert type(algo.env_runner.env.envs[0].unwrapped).__name__ == "Good"
        assert marker.exists()
        argv = ["evaluate", str(planted.checkpoint), "--episodes", "1", "--env", given]
        assert main(argv) == 0
        assert main(["train", "--restore", str(planted.checkpoint), "--iterations", "1",
                     "--env", given]) == 0  # fmt: skip
    finally:
        sys.modules.pop(good, None)
    capsys.readouterr()
    planted.assert_not_imported()


def test_an_evaluation_config_naming_code_is_refused_unless_the_caller_gives_one(
    planted: Planted, capsys: pytest.CaptureFixture[str]
) -> None:
    overrides = {"env": planted.form("{name}:EvilEnv")}
    rewrite(planted.checkpoint, "evaluation", "evaluation_config", overrides)
    named = f"stores evaluation_config {overrides!r}, whose env {overrides['env']!r} names code"
    for env in (None, "CartPole-v1"):  # env= sets the env, not the evaluation's override
        with pytest.raises(ConfigError, match=re.escape(named) + r".*pass config="):
            Algorithm.from_checkpoint(planted.checkpoint, env=env)
    with Algorithm.from_checkpoint(planted.checkpoint, config=tiny_ppo()):
        pass
    argv = ["train", "--restore", str(planted.checkpoint), "--iterations", "1"]
    assert main(argv) == 2
    assert "pass --set evaluation_config=" in one_line(capsys)
    assert main([*argv, "--set", 'evaluation_config={"explore": false}']) == 0
    capsys.readouterr()
    planted.assert_not_imported()


@pytest.mark.parametrize(
    ("section", "setting", "value", "message"),
    [
        ("environment", "env_task_fn", "EVIL", "env_task_fn must be callable"),
        ("training", "learner_class", "EVIL", "learner_class must be None or"),
        ("evaluation", "custom_evaluation_function", "EVIL", "must be callable"),
        ("env_runners", "env_to_module_connector", "EVIL", "must be a callable"),
        ("multi_agent", "policy_mapping_fn", "EVIL", "must be callable"),
        ("env_runners", "exploration_config", {"type": "EVIL"}, "unknown exploration"),
        ("callbacks", "callbacks_class", ["EVIL"], "a 'callbacks' section"),
        ("callbacks", "plugins", True, "a 'callbacks' section"),
        # to_dict()'s flat callbacks keys, which update_from_dict() takes too
        ("callbacks_plugins", "plugins", True, "a 'callbacks_plugins' section"),
    ],
)
def test_other_stored_settings_that_could_name_code_are_refused(
    planted: Planted,
    capsys: pytest.CaptureFixture[str],
    section: str,
    setting: str,
    value: Any,
    message: str,
) -> None:
    evil = planted.form("{name}:EvilEnv")  # "EVIL" in a value stands for it
    value = json.loads(json.dumps(value).replace('"EVIL"', json.dumps(evil)))
    rewrite(planted.checkpoint, section, setting, value)
    where = f"checkpoint {str(planted.checkpoint)!r} holds a bad config: "
    with pytest.raises(ConfigError, match=re.escape(where) + ".*" + re.escape(message)):
        Algorithm.from_checkpoint(planted.checkpoint)
    argv = ["train", "--restore", str(planted.checkpoint), "--iterations", "1"]
    assert main([*argv, "--env", "CartPole-v1"]) == 2
    assert message in one_line(capsys)
    planted.assert_not_imported()


def test_a_registered_name_and_a_gymnasium_id_load_without_env(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    registered = f"team:cartpole_{uuid.uuid4().hex[:8]}"  # a colon, yet no code: registered
    register_env(registered, lambda context: gym.make("CartPole-v1"))
    for env in (registered, "CartPole-v1"):
        checkpoint = tmp_path / env.replace(":", "_")
        with tiny_ppo(env).build() as algo:
            algo.train()
            algo.save_to_path(checkpoint)
        with Algorithm.from_checkpoint(checkpoint) as algo:
            assert algo.training_iteration == 1
        assert main(["evaluate", str(checkpoint), "--episodes", "1"]) == 0
        assert main(["train", "--restore", str(checkpoint), "--iterations", "2"]) == 0
        assert "stopped: training_iteration=2" in capsys.readouterr().out


def test_a_plain_name_nobody_registered_here_is_an_unknown_env_not_code(
    planted: Planted,
) -> None:
    rewrite(planted.checkpoint, "environment", "env", "registered_elsewhere")
    with pytest.raises(ConfigError, match=r"holds a bad config: unknown env id"):
        Algorithm.from_checkpoint(planted.checkpoint)


def test_an_env_class_kept_out_of_a_checkpoint_is_given_back_with_env_alone(
    tmp_path: Path,
) -> None:
    with tiny_ppo(CartPoleEnv).build() as algo:
        algo.save_to_path(tmp_path / "checkpoint")
    with pytest.raises(ConfigError, match=r"config with code in env, which checkpoints never"):
        Algorithm.from_checkpoint(tmp_path / "checkpoint")
    with Algorithm.from_checkpoint(tmp_path / "checkpoint", env=CartPoleEnv) as algo:
        assert algo.config.env is CartPoleEnv
        assert algo.config.train_batch_size == 64
