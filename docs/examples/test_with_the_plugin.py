"""Test your callbacks with hookbus's pytest fixtures (the plugin loads by itself).

Run it as a test file (``pytest docs/examples/test_with_the_plugin.py``) or as a script.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hookbus.events import EpisodeEnd
from hookbus.kernel import Bus, Callback, read_recording


class CountLongEpisodes(Callback):
    """The callback under test: counts episodes of 30 steps or more."""

    def __init__(self) -> None:
        self.long = 0

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        if len(episode) >= 30:
            self.long += 1
        metrics_logger.log_value("long_episodes", 1 if len(episode) >= 30 else 0, reduce="sum")


def test_counts_match_the_recording(
    hookbus_recording: Path, hookbus_replay: Callable[..., Any]
) -> None:
    # hookbus_recording: a real PPO run on CartPole, recorded once per test session.
    ends = [e for e in read_recording(hookbus_recording) if isinstance(e, EpisodeEnd)]
    result = hookbus_replay(hookbus_recording, CountLongEpisodes)
    (callback,) = result.callbacks
    assert 0 < callback.long < len(ends)
    assert result.metrics["long_episodes"] == callback.long


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_same_result_on_both_event_loops(
    hookbus_recording: Path, hookbus_replay: Callable[..., Any], backend: str
) -> None:
    result = hookbus_replay(hookbus_recording, CountLongEpisodes, backend=backend)
    assert result.metrics["long_episodes"] > 0


def test_a_bus_of_your_own(hookbus_bus: Bus) -> None:
    seen: list[Any] = []
    hookbus_bus.subscribe(EpisodeEnd, lambda event, **kw: seen.append(event))
    assert hookbus_bus.has_subscribers(EpisodeEnd)


if __name__ == "__main__":
    # A fresh interpreter, as `pytest` itself would be (this one has imported hookbus already);
    # -p no:cacheprovider leaves no .pytest_cache behind.
    command = [sys.executable, "-m", "pytest", __file__, "-q", "-p", "no:cacheprovider"]
    sys.exit(subprocess.run(command, check=False).returncode)
