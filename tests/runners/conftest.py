"""Small, fast configurations for runner tests."""

from __future__ import annotations

import pytest

from hookbus.runners import PPOConfig


@pytest.fixture
def small_ppo() -> PPOConfig:
    """PPO on CartPole with a tiny batch: an iteration takes a few milliseconds."""
    return (
        PPOConfig()
        .environment("CartPole-v1")
        .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
        .debugging(seed=0)
    )
