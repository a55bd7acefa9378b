"""hookbus's pytest plugin (entry point ``pytest11``): fixtures for testing your callbacks.

- ``hookbus_bus``: an open, empty Bus, closed after the test.
- ``hookbus_recording``: the path of a recording of a small real run (PPO on CartPole-v1,
  seed 0, two iterations of 500 env steps, every hook), made once per test session.
- ``hookbus_replay``: ``hookbus.kernel.replay_into``, replaying a recording into callbacks and
  returning what they produced (a ``hookbus.kernel.ReplayResult``). Like every reader, it
  decodes your event types only if the test defined them (or passes ``types=``): it never
  imports the modules a recording's header names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hookbus.kernel import Bus, Recorder, ReplayResult, replay_into

__all__ = ("ReplayResult", "hookbus_bus", "hookbus_recording", "hookbus_replay")


@pytest.fixture
def hookbus_bus() -> Iterator[Bus]:
    """Give an open, empty Bus; it is closed after the test."""
    with Bus() as bus:
        yield bus


@pytest.fixture(scope="session")
def hookbus_recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Record a small real run once per session and give the file's path."""
    from hookbus.runners import PPOConfig

    path = tmp_path_factory.mktemp("hookbus") / "ppo_cartpole.msgpack"
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .training(train_batch_size=500, minibatch_size=100, num_epochs=2)
        .callbacks(Recorder(path))
        .debugging(seed=0)
    )
    with config.build() as algo:
        algo.train()
        algo.train()
    return path


@pytest.fixture
def hookbus_replay() -> Callable[..., ReplayResult]:
    """Give ``hookbus.kernel.replay_into(source, callbacks, backend="asyncio", hooks=None,
    sources=None, metrics_logger=None, **bus_options) -> ReplayResult``."""
    return replay_into
