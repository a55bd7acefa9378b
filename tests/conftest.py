"""Shared fixtures: every async test runs on both anyio backends; small, fast configs."""

from __future__ import annotations

import pytest

from hookbus.runners import PPOConfig


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run each ``@pytest.mark.anyio`` test once on asyncio and once on trio."""
    return str(request.param)


@pytest.fixture
def small_ppo() -> PPOConfig:
    """PPO on CartPole with a tiny batch: an iteration takes a few milliseconds."""
    return (
        PPOConfig()
        .environment("CartPole-v1")
        .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
        .debugging(seed=0)
    )
