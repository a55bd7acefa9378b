"""Settings that would ruin training silently are ConfigErrors at build(), naming the setting."""

from __future__ import annotations

import math

import pytest

from hookbus.kernel import ConfigError
from hookbus.runners import DQNConfig, PPOConfig


@pytest.mark.parametrize("lr", [math.inf, math.nan, -1e-3, 0.0, "0.1"])
@pytest.mark.parametrize("config_class", [PPOConfig, DQNConfig])
def test_a_non_finite_or_non_positive_lr_is_refused(config_class: type, lr: object) -> None:
    config = config_class().environment("CartPole-v1").training(lr=lr)
    with pytest.raises(ConfigError, match=r"lr must be a finite number > 0, got"):
        config.build()


@pytest.mark.parametrize(
    "name", ["lambda_", "clip_param", "vf_loss_coeff", "entropy_coeff", "kl_coeff"]
)
@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_ppos_coefficients_must_be_finite(name: str, value: float) -> None:
    config = PPOConfig().environment("CartPole-v1").training(**{name: value})
    with pytest.raises(ConfigError, match=rf"{name} must be a finite number"):
        config.build()


def test_vf_clip_param_may_stay_infinite(small_ppo: PPOConfig) -> None:
    small_ppo.training(vf_clip_param=math.inf).validate()


def test_a_minibatch_larger_than_the_train_batch_fails_at_build() -> None:
    config = (
        PPOConfig().environment("CartPole-v1").training(train_batch_size=200, minibatch_size=500)
    )
    with pytest.raises(
        ConfigError, match=r"minibatch_size \(500\) must be <= train_batch_size \(200\)"
    ):
        config.validate()  # what build() runs first, before any env or worker starts


class ExplodesOnce:
    """An on_train_result handler that raises in the first iteration only."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, **kwargs: object) -> None:
        self.calls += 1
        if self.calls == 1:
            raise ValueError("first iteration")


def test_a_failing_on_train_result_leaves_the_next_result_right(small_ppo: PPOConfig) -> None:
    with small_ppo.callbacks(on_train_result=ExplodesOnce()).build() as algo:
        with pytest.raises(ValueError, match="first iteration"):
            algo.train()
        second = algo.train()
    # The failed iteration was closed: the next one reports its own ~200 steps, not ~400.
    assert 200 <= second["env_runners"]["num_env_steps_sampled"] < 210
    assert second["training_iteration"] == 2


def test_errors_logged_in_on_train_result_count_in_the_same_result(small_ppo: PPOConfig) -> None:
    config = small_ppo.callbacks(on_train_result=ExplodesOnce(), on_error="log")
    with config.build() as algo:
        first = algo.train()
        second = algo.train()
    assert first["callbacks"]["errors"] == 1
    assert second["callbacks"]["errors"] == 1  # a lifetime count: nothing new
