"""hookbus's pytest plugin (entry point ``pytest11``): fixtures for testing your callbacks.

- ``hookbus_bus``: an open, empty Bus, closed after the test.
- ``hookbus_recording``: the path of a recording of a small real run (PPO on CartPole-v1,
  seed 0, two iterations of 500 env steps, every hook), made once per test session.
- ``hookbus_replay``: ``hookbus.kernel.replay_into``, replaying a recording into callbacks and
  returning what they produced (a ``hookbus.kernel.ReplayResult``). Like every reader, it
  decodes your event types only if the test defined them (or passes ``types=``): it never
  imports the modules a recording's header names. RLlib callbacks (``RLlibCallback``
  subclasses) are taken as they are (``bridges.from_rllib``), and the result's ``callbacks``
  are your instances.

The ini option ``hookbus_rllib_standin = true`` serves, where Ray is not installed, the
RLlib names that callback modules import (``bridges/_rllib_standin.py``), so that such a
module is tested against a recording as it is. It is set up before conftest files load.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hookbus.kernel import Bus, Recorder, ReplayResult, replay_into

__all__ = (
    "ReplayResult",
    "hookbus_bus",
    "hookbus_recording",
    "hookbus_replay",
    "pytest_addoption",
    "pytest_configure",
    "pytest_load_initial_conftests",
    "pytest_unconfigure",
)

STANDIN_OPTION = "hookbus_rllib_standin"


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the ini option ``hookbus_rllib_standin``."""
    parser.addini(
        STANDIN_OPTION,
        type="bool",
        default=False,
        help="hookbus: where Ray is not installed, serve the RLlib names callback modules "
        "import (RLlibCallback, ray.rllib.utils.metrics, episodes) as hookbus's stand-ins, "
        "so that they replay without Ray (docs/testing.md)",
    )


def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """Install the RLlib stand-in, if asked, before conftest files import callbacks."""
    _install_standin(early_config)


def pytest_configure(config: pytest.Config) -> None:
    """Install the RLlib stand-in, if asked (for a plugin loaded after the conftests)."""
    _install_standin(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the RLlib stand-in, if installed: the process may run other sessions."""
    if config.getini(STANDIN_OPTION):
        from hookbus.runners.bridges import _rllib_standin

        _rllib_standin.uninstall()


def _install_standin(config: pytest.Config) -> None:
    if config.getini(STANDIN_OPTION):
        from hookbus.runners.bridges import _rllib_standin

        _rllib_standin.install()  # nothing where Ray is installed: RLlib's own serve


@pytest.fixture
def hookbus_bus() -> Iterator[Bus]:
    """Give an open, empty Bus; it is closed after the test."""
    with Bus() as bus:
        yield bus


@pytest.fixture(scope="session")
def hookbus_recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Record a small real run once per session and give the file's path."""
    from ..algorithms.ppo import PPOConfig

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
    sources=None, metrics_logger=None, merge="framework", producer=None, **bus_options) ->
    ReplayResult``, taking RLlib callbacks as they are (``iterations``: each recorded
    iteration's results, as the recording's framework reported them)."""
    return _replay_into


def _replay_into(source: Any, callbacks: object = None, **options: Any) -> ReplayResult:
    """Run ``replay_into``; RLlib callbacks among ``callbacks`` are adapted first, and the
    result's ``callbacks`` are theirs (the instances of the user's classes)."""
    from hookbus.runners.bridges import _bus, _rllib_replay

    items = callbacks if isinstance(callbacks, list | tuple) else [callbacks]
    if not any(_rllib_replay.is_rllib_callback(item) for item in items):
        return replay_into(source, callbacks, **options)
    result = replay_into(source, _rllib_replay.from_rllib(*items), **options)
    own = tuple(c.target if isinstance(c, _bus.ForeignCallback) else c for c in result.callbacks)
    return dataclasses.replace(result, callbacks=own)
