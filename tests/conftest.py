"""Shared fixtures: every async test runs on both anyio backends; small, fast configs."""

from __future__ import annotations

from collections.abc import Iterator

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


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[None]:
    """A local Ray of 2 CPUs for the whole session; hookbus joins it (never starts its own)."""
    import ray  # the test extra installs hookbus[ray]: a missing Ray fails, never skips

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()
