"""A checkpoint's modules in RLlib's folders, loaded alone with ``RLModule.from_checkpoint``
(RLlib's checkpointing and getting-started pages run a trained policy this way)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hookbus.events import codec
from hookbus.kernel import ConfigError
from hookbus.runners import (
    DQNConfig,
    MultiRLModule,
    PPOConfig,
    PPOModule,
    RandomRLModule,
    RLModule,
    RLModuleSpec,
)

from ..multi_agent_envs import AlwaysZero
from .test_module_specs import game

MODULES = Path("learner_group", "learner", "rl_module")


def pendulum_ppo() -> PPOConfig:
    return (
        PPOConfig()
        .environment("Pendulum-v1")
        .training(train_batch_size=128, minibatch_size=64, num_epochs=1)
        .rl_module(model_config={"fcnet_hiddens": [16], "vf_share_layers": True})
        .debugging(seed=0)
    )


def test_a_trained_ppo_module_loads_alone_and_acts_as_in_its_algorithm(tmp_path: Path) -> None:
    obs = np.random.default_rng(0).uniform(-1, 1, (8, 3)).astype(np.float32)
    with pendulum_ppo().build() as algo:
        algo.train()  # weights that differ from a fresh module's
        checkpoint = algo.save_to_path(tmp_path / "ckpt")
        trained = algo.get_module()
        expected = trained.forward_inference(obs)
        logits = trained.action_dist_inputs(obs)
    module = RLModule.from_checkpoint(checkpoint / MODULES / "default_policy")
    np.testing.assert_array_equal(module.forward_inference(obs), expected)
    # RLlib's batch form: a dict with "obs" in, its columns out.
    np.testing.assert_array_equal(
        module.forward_inference({"obs": obs})["action_dist_inputs"], logits
    )
    assert module.model_config["fcnet_hiddens"] == [16]
    assert module.model_config["vf_share_layers"] is True
    assert module.observation_space.shape == (3,)


def test_a_torch_tensor_goes_in_as_on_rllibs_page(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    with pendulum_ppo().build() as algo:
        checkpoint = algo.save_to_path(tmp_path / "ckpt")
    module = RLModule.from_checkpoint(checkpoint / MODULES / "default_policy")
    batch = torch.tensor([0.5, 0.25, -0.3]).unsqueeze(0).float()
    out = module.forward_inference({"obs": batch})["action_dist_inputs"]
    expected = module.forward_inference({"obs": batch.numpy()})["action_dist_inputs"]
    assert out.shape == (1, 2)  # Pendulum: the Gaussian's mean and log-std
    np.testing.assert_array_equal(out, expected)


def test_a_dqn_module_loads_alone(tmp_path: Path) -> None:
    config = DQNConfig().environment("CartPole-v1").training(model={"fcnet_hiddens": [8]})
    obs = np.random.default_rng(1).normal(size=(16, 4)).astype(np.float32)
    with config.debugging(seed=3).build() as algo:
        checkpoint = algo.save_to_path(tmp_path / "ckpt")
        expected = algo.get_module().q_values(obs)
    module = RLModule.from_checkpoint(checkpoint / MODULES / "default_policy")
    np.testing.assert_array_equal(module.q_values(obs), expected)
    actions = module.forward_inference({"obs": obs})["actions"]
    np.testing.assert_array_equal(actions, expected.argmax(axis=1))


def test_the_rl_module_folder_gives_every_module_by_id(tmp_path: Path) -> None:
    spec = RLModuleSpec(module_class=RandomRLModule)
    with game(spec).build() as algo:
        algo.train()
        checkpoint = algo.save_to_path(tmp_path / "ckpt")
        main = algo.get_module("main")
    modules = RLModule.from_checkpoint(checkpoint / MODULES)
    assert sorted(modules) == ["main", "opponent"]
    assert isinstance(modules["opponent"], RandomRLModule)
    assert modules["opponent"].action_space == main.action_space
    obs = np.eye(5, dtype=np.float32)
    np.testing.assert_array_equal(
        modules["main"].forward_inference(obs), main.forward_inference(obs)
    )
    assert sorted(MultiRLModule.from_checkpoint(checkpoint / MODULES)) == ["main", "opponent"]
    with pytest.raises(ConfigError, match="that folder holds one module; give its parent"):
        MultiRLModule.from_checkpoint(checkpoint / MODULES / "main")


def test_a_module_of_the_users_class_loads_only_through_that_class(tmp_path: Path) -> None:
    with game(RLModuleSpec(module_class=AlwaysZero)).build() as algo:
        checkpoint = algo.save_to_path(tmp_path / "ckpt")
    folder = checkpoint / MODULES / "opponent"
    with pytest.raises(ConfigError, match=r"of class '.*AlwaysZero', not one of hookbus's"):
        RLModule.from_checkpoint(folder)
    module = AlwaysZero.from_checkpoint(folder)
    assert isinstance(module, AlwaysZero)
    assert module.action_space.n == 5
    assert module.forward_inference(np.zeros((3, 5))).tolist() == [0, 0, 0]
    # All of them through the user's class: hookbus's own modules stay what they were.
    modules = AlwaysZero.from_checkpoint(folder.parent)
    assert isinstance(modules["opponent"], AlwaysZero)
    assert isinstance(modules["main"], PPOModule)


def test_saving_again_into_a_folder_drops_a_removed_modules_folder(tmp_path: Path) -> None:
    with game(RLModuleSpec(module_class=RandomRLModule)).build() as algo:
        algo.add_module("frozen", RLModuleSpec(module_class=RandomRLModule))
        checkpoint = algo.save_to_path(tmp_path / "ckpt")
        assert sorted(p.name for p in (checkpoint / MODULES).iterdir()) == [
            "frozen",
            "main",
            "opponent",
        ]
        algo.remove_module("frozen")
        algo.save_to_path(checkpoint)
    assert sorted(p.name for p in (checkpoint / MODULES).iterdir()) == ["main", "opponent"]
    assert sorted(RLModule.from_checkpoint(checkpoint / MODULES)) == ["main", "opponent"]


def test_a_file_names_hookbus_classes_publicly_though_none_was_looked_up(tmp_path: Path) -> None:
    # A fresh process that reaches PPOModule only through PPOConfig().build(), never as
    # hookbus.runners.PPOModule: the file names it by its public name all the same.
    code = (
        "import sys\n"
        "from hookbus.runners import PPOConfig\n"
        "with PPOConfig().environment('CartPole-v1').build() as algo:\n"
        "    algo.save_to_path(sys.argv[1])\n"
        "print('PPOModule' in vars(sys.modules['hookbus.runners']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["False"]  # never given by hookbus.runners
    file = tmp_path / MODULES / "default_policy" / "module_state.msgpack"
    assert codec.decode_msgpack(file.read_bytes())["module_class"] == "hookbus.runners.PPOModule"
    assert isinstance(RLModule.from_checkpoint(file.parent), PPOModule)


def test_what_is_not_a_module_folder_is_named(tmp_path: Path) -> None:
    with pendulum_ppo().build() as algo:
        checkpoint = algo.save_to_path(tmp_path / "ckpt")
    with pytest.raises(ConfigError, match=r"is an Algorithm's checkpoint: its modules are in "):
        RLModule.from_checkpoint(checkpoint)
    with pytest.raises(ConfigError, match=r"no module checkpoint at .*holds module_state"):
        RLModule.from_checkpoint(tmp_path)
    file = checkpoint / MODULES / "default_policy" / "module_state.msgpack"
    record = codec.decode_msgpack(file.read_bytes())
    file.write_bytes(codec.encode_msgpack({**record, "format": "hookbus-rl-module/9"}))
    with pytest.raises(ConfigError, match=r"of format 'hookbus-rl-module/9'; this hookbus"):
        RLModule.from_checkpoint(file.parent)
    file.write_bytes(codec.encode_msgpack(record)[:40])  # cut short
    with pytest.raises(ConfigError, match=r"is not a module checkpoint hookbus reads"):
        RLModule.from_checkpoint(file.parent)
    file.write_bytes(b"\x81\xa6format\xa4else")  # another kind of file: {"format": "else"}
    with pytest.raises(ConfigError, match=r"is not a module checkpoint hookbus reads"):
        RLModule.from_checkpoint(file.parent)
