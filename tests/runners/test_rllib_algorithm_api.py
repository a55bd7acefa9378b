"""RLlib's Algorithm names and calling conventions (rllib/algorithms/algorithm.py and
algorithm_config.py): a sync training_step() override, get_default_config(), get_module(),
get_weights()/set_weights(), restore_env_runners(group), and the settings RLlib's examples
set routinely."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from hookbus.kernel import ConfigError
from hookbus.runners import DQN, PPO, DQNConfig, PPOConfig


class CountingPPO(PPO):
    """An RLlib-style override: sync, calling super().training_step()."""

    steps = 0

    def training_step(self) -> None:
        type(self).steps += 1
        super().training_step()
        self.metrics.log_value("my_steps", type(self).steps, reduce="max")


class CountingConfig(PPOConfig):
    algo_class = CountingPPO


def test_a_sync_training_step_override_runs_as_written(small_ppo: PPOConfig) -> None:
    config = CountingConfig().update_from_dict(small_ppo.to_dict())
    with config.build() as algo:
        first = algo.train()
        second = algo.train()
    assert CountingPPO.steps == 2
    assert second["my_steps"] == 2
    assert second["num_env_steps_sampled_lifetime"] > first["num_env_steps_sampled_lifetime"]


@pytest.mark.anyio
async def test_a_sync_training_step_override_inside_an_event_loop(small_ppo: PPOConfig) -> None:
    config = CountingConfig().update_from_dict(small_ppo.to_dict())
    CountingPPO.steps = 0
    async with config.build() as algo:
        result = await algo.atrain()
    assert result["my_steps"] == 1


def test_get_default_config_is_a_classmethod_giving_the_algorithms_config() -> None:
    assert type(PPO.get_default_config()) is PPOConfig
    assert type(DQN.get_default_config()) is DQNConfig
    assert type(CountingPPO.get_default_config()) is CountingConfig


def test_a_subclass_without_a_config_of_its_own_gets_its_bases() -> None:
    class Quiet(CountingPPO):  # as Tune's wrappers subclass a trainable
        pass

    class Plain(DQN):
        pass

    assert type(Quiet.get_default_config()) is CountingConfig
    assert type(Plain.get_default_config()) is DQNConfig


def test_module_and_weights(small_ppo: PPOConfig) -> None:
    with small_ppo.build() as algo:
        module = algo.get_module()
        assert module is algo.learner.module
        weights = algo.get_weights()
        assert list(weights) == ["default_policy"]
        zeros = {k: np.zeros_like(v) for k, v in weights["default_policy"].items()}
        algo.set_weights({"default_policy": zeros})
        assert all(not np.any(v) for v in algo.get_module().get_state().values())
        # RLlib 2.60's get_module: a single-agent runner's module is no MultiRLModule, so
        # any id gives it (algorithm.py, get_module).
        assert algo.get_module("other") is module
        with pytest.raises(KeyError, match=r"module ids \['other'\]"):
            algo.set_weights({"other": zeros})


def test_restore_env_runners_by_hand(small_ppo: PPOConfig) -> None:
    config = small_ppo.env_runners(num_env_runners=2, backend="process")
    config = config.fault_tolerance(
        restart_failed_env_runners=True, delay_between_env_runner_restarts_s=0
    )
    recreated: list[Any] = []

    def on_recreated(*, env_runner_group: Any, env_runner_indices: list[int]) -> None:
        # A sync handler reaching worker processes through the sync facade (RLlib's tests).
        pongs = env_runner_group.foreach_env_runner(lambda w: w.ping(), local_env_runner=False)
        recreated.append((list(env_runner_indices), pongs))

    with config.callbacks(on_env_runners_recreated=on_recreated).build() as algo:
        group = algo.env_runner_group
        assert algo.restore_env_runners(group) == []  # nothing failed
        group.health.mark_failed(2)
        assert group.healthy_env_runner_ids() == [1]
        assert algo.restore_env_runners(group) == [2]
        assert group.healthy_env_runner_ids() == [1, 2]
    assert recreated == [([2], ["pong", "pong"])]


def test_settings_rllib_examples_set_are_accepted() -> None:
    config = (
        PPOConfig()
        .environment("CartPole-v1", is_atari=False)
        .env_runners(create_env_on_local_worker=True)
        .training(train_batch_size_per_learner=512, grad_clip_by="global_norm")
        .debugging(logger_config={"type": "ray.tune.logger.NoopLogger"})
    )
    assert config.train_batch_size == config.train_batch_size_per_learner == 512
    config.validate()
    with pytest.raises(
        ConfigError, match=r"grad_clip_by must be one of 'global_norm', got 'value'"
    ):
        config.training(grad_clip_by="value").validate()
