"""The pytest plugin, used the way a user's test suite uses it."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hookbus.events import EpisodeEnd, EpisodeStep
from hookbus.kernel import Bus, Callback, read_recording


class ReturnsAndTheta(Callback):
    def __init__(self) -> None:
        self.returns: list[float] = []

    def on_episode_step(self, *, episode: Any, **kwargs: Any) -> None:
        episode.add_temporary_timestep_data("theta", float(episode.get_observations(-1)[2]))

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        self.returns.append(episode.get_return())
        thetas = episode.get_temporary_timestep_data("theta")  # one per step, the last too
        metrics_logger.log_value("theta_abs_max", float(np.max(np.abs(thetas))), window=50)


def test_the_session_recording_is_a_real_run(hookbus_recording: Path) -> None:
    events = list(read_recording(hookbus_recording))
    assert {e.source for e in events} == {"env_runner:0", "algorithm"}
    assert sum(isinstance(e, EpisodeStep) for e in events) > 500
    assert sum(isinstance(e, EpisodeEnd) for e in events) > 10


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_replay_fixture_returns_metrics_and_callback_state(
    hookbus_recording: Path, hookbus_replay: Callable[..., Any], backend: str
) -> None:
    result = hookbus_replay(hookbus_recording, ReturnsAndTheta, backend=backend)
    (callback,) = result.callbacks
    ends = [e for e in read_recording(hookbus_recording) if isinstance(e, EpisodeEnd)]
    assert len(callback.returns) == len(ends)
    assert all(r >= 8 for r in callback.returns)  # CartPole episodes last 8+ steps
    assert 0 < result.metrics["theta_abs_max"] < 0.25
    assert result.events == len(list(read_recording(hookbus_recording)))


def test_bus_fixture_is_open_and_empty(hookbus_bus: Bus) -> None:
    assert not hookbus_bus.closed
    assert hookbus_bus.statistics().subscribers == {}


def test_replay_fixture_takes_rllib_callbacks_as_they_are(
    hookbus_recording: Path, hookbus_replay: Callable[..., Any]
) -> None:
    from ray.rllib.callbacks.callbacks import RLlibCallback

    class Lengths(RLlibCallback):
        def __init__(self, scale: int = 1) -> None:
            super().__init__()
            self.scale = scale
            self.lengths: list[int] = []
            self.chunks: list[Any] = []

        def on_episode_end(self, *, episode: Any, prev_episode_chunks: Any, **kwargs: Any) -> None:
            self.lengths.append(len(episode) * self.scale)
            self.chunks.append(prev_episode_chunks)

    # A partial with the class's arguments, as RLlib's examples pass callbacks.
    result = hookbus_replay(hookbus_recording, [Lengths, functools.partial(Lengths, scale=2)])
    plain, scaled = result.callbacks
    assert isinstance(plain, Lengths)
    ends = [e for e in read_recording(hookbus_recording) if isinstance(e, EpisodeEnd)]
    assert len(plain.lengths) == len(ends)
    assert scaled.lengths == [2 * n for n in plain.lengths]
    assert plain.chunks == [[]] * len(ends)  # a replay rebuilds whole episodes


def test_the_rllib_standin_option_is_registered(pytestconfig: pytest.Config) -> None:
    # Off here; and with Ray installed it would change nothing (tests/runners/bridges).
    assert pytestconfig.getini("hookbus_rllib_standin") is False
