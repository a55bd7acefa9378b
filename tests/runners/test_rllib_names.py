"""RLlib's names a user types first: save/restore, from_checkpoint, iteration, api_stack."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hookbus.kernel import Callback, ConfigError
from hookbus.runners import PPO, Algorithm, DQNConfig, PPOConfig


def test_save_restore_and_iteration(small_ppo: PPOConfig, tmp_path: Path) -> None:
    with small_ppo.build() as algo:
        algo.train()
        assert algo.iteration == algo.training_iteration == 1
        path = algo.save(tmp_path / "ckpt")
        assert path == tmp_path / "ckpt"
        algo.train()
        assert algo.iteration == 2
        algo.restore(path)
        assert algo.iteration == 1


def test_save_without_a_directory_makes_one(small_ppo: PPOConfig) -> None:
    with small_ppo.build() as algo:
        path = algo.save()
    assert (path / "algorithm_state.msgpack").is_file()


def test_from_checkpoint_rebuilds_the_algorithm_and_its_weights(
    small_ppo: PPOConfig, tmp_path: Path
) -> None:
    config = small_ppo.training(lr=1e-3).env_runners(num_envs_per_env_runner=2)
    with config.build() as algo:
        algo.train()
        path = algo.save(tmp_path / "ckpt")
        obs = np.zeros(4, dtype=np.float32)
        weights = algo.learner.module.get_state()
    restored = Algorithm.from_checkpoint(path)
    try:
        assert isinstance(restored, PPO)
        assert restored.iteration == 1
        assert restored.config.lr == 1e-3
        assert restored.config.num_envs_per_env_runner == 2
        for key, value in weights.items():
            np.testing.assert_array_equal(restored.learner.module.get_state()[key], value)
        assert restored.compute_single_action(obs, explore=False) in (0, 1)
        assert restored.train()["training_iteration"] == 2
    finally:
        restored.stop()


class Counts(Callback):
    def __init__(self) -> None:
        self.episodes = 0

    def on_episode_end(self, **kwargs: Any) -> None:
        self.episodes += 1


def test_a_checkpoint_never_holds_code_so_from_checkpoint_asks_for_the_config(
    small_ppo: PPOConfig, tmp_path: Path
) -> None:
    config = small_ppo.callbacks(Counts)
    with config.build() as algo:
        algo.train()
        path = algo.save(tmp_path / "ckpt")
    with pytest.raises(ConfigError, match=r"code in callbacks.*config=\.\.\."):
        Algorithm.from_checkpoint(path)
    restored = PPO.from_checkpoint(path, config=config)
    try:
        assert restored.iteration == 1
    finally:
        restored.stop()


def test_from_checkpoint_refuses_another_algorithms_config(
    small_ppo: PPOConfig, tmp_path: Path
) -> None:
    with small_ppo.build() as algo:
        path = algo.save(tmp_path / "ckpt")
    with pytest.raises(ConfigError, match="holds a PPO algorithm; DQNConfig builds DQN"):
        Algorithm.from_checkpoint(path, config=DQNConfig().environment("CartPole-v1"))


def test_config_copy_and_to_dict() -> None:
    config = PPOConfig().environment("CartPole-v1").training(lr=1e-3)
    copy = config.copy().training(lr=5e-4)
    assert (config.lr, copy.lr) == (1e-3, 5e-4)
    settings = config.to_dict()  # flat, as RLlib's
    assert settings["lr"] == 1e-3
    assert settings["rollout_fragment_length"] == "auto"


def test_api_stack_and_framework_take_what_hookbus_does() -> None:
    config = PPOConfig().api_stack(
        enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True
    )
    assert config.framework("numpy") is config
    with pytest.raises(ConfigError, match=r"enable_rl_module_and_learner=False.*new API stack"):
        config.api_stack(enable_rl_module_and_learner=False)
    with pytest.raises(ConfigError, match=r"framework\('torch'\).*numpy.*allowed"):
        config.framework("torch")
    with pytest.raises(ConfigError, match=r"eager_tracing"):
        config.framework("numpy", eager_tracing=True)


def test_save_to_path_without_a_path_makes_a_new_folder(
    small_ppo: PPOConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # RLlib's save_to_path() (Checkpointable) writes to a new folder in the system's
    # temporary directory and returns it (here the test's, to leave nothing behind).
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with small_ppo.build() as algo:
        first, second = algo.save_to_path(), algo.save_to_path()
    assert first != second
    assert first.parent == second.parent == tmp_path
    assert all((path / "algorithm_state.msgpack").is_file() for path in (first, second))
    restored = Algorithm.from_checkpoint(first)
    restored.stop()


def test_build_algo_is_build_and_sets_the_env_as_rllibs_does(small_ppo: PPOConfig) -> None:
    config = small_ppo.evaluation(evaluation_config={"explore": False})
    algo = config.build_algo(env="CartPole-v1", use_copy=False)
    try:
        assert isinstance(algo, PPO)
        assert algo.config.env == "CartPole-v1"
        assert config.evaluation_config == {"explore": False, "env": "CartPole-v1"}
        assert algo.train()["training_iteration"] == 1
    finally:
        algo.stop()


def test_get_policy_names_get_module(small_ppo: PPOConfig) -> None:
    with small_ppo.build() as algo:
        with pytest.raises(NotImplementedError, match=r"old API stack .* use algo.get_module"):
            algo.get_policy()
        assert algo.get_module() is algo.learner.module


def test_a_multi_agent_env_setting_only_agents_gets_possible_agents() -> None:
    # RLlib's different_spaces_for_agents.py sets self.agents, then calls __init__.
    from hookbus.runners import MultiAgentEnv

    class TwoAgents(MultiAgentEnv):
        def __init__(self) -> None:
            self.agents = ["agent0", "agent1"]
            super().__init__()

    env = TwoAgents()
    assert env.possible_agents == ["agent0", "agent1"]
    assert env.possible_agents is not env.agents
    assert MultiAgentEnv().possible_agents == MultiAgentEnv().agents == []


def test_rllib_constants_import_from_runners_with_rllibs_values(small_ppo: PPOConfig) -> None:
    from hookbus.runners import (
        DEFAULT_MODULE_ID,
        DEFAULT_POLICY_ID,
        ENV_RUNNER_RESULTS,
        EPISODE_RETURN_MEAN,
        EVALUATION_RESULTS,
        LEARNER_RESULTS,
        NUM_ENV_STEPS_SAMPLED_LIFETIME,
        TIMERS,
    )

    # The values of ray.rllib.core and ray.rllib.utils.metrics (RLlib 2.60).
    assert DEFAULT_MODULE_ID == DEFAULT_POLICY_ID == "default_policy"
    assert (ENV_RUNNER_RESULTS, EVALUATION_RESULTS, LEARNER_RESULTS) == (
        "env_runners",
        "evaluation",
        "learners",
    )
    assert EPISODE_RETURN_MEAN == "episode_return_mean"
    assert NUM_ENV_STEPS_SAMPLED_LIFETIME == "num_env_steps_sampled_lifetime"
    with small_ppo.build() as algo:
        result = algo.train()
    assert EPISODE_RETURN_MEAN in result[ENV_RUNNER_RESULTS]
    assert result[NUM_ENV_STEPS_SAMPLED_LIFETIME] > 0
    assert DEFAULT_MODULE_ID in result[LEARNER_RESULTS]
    assert TIMERS in result
