"""replay_into(): replay from sync code and collect what the callbacks logged."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hookbus.events import EpisodeEnd
from hookbus.kernel import (
    Callback,
    ConfigError,
    RecordingError,
    ReplayResult,
    read_recording,
    replay_into,
)
from hookbus.metrics import MetricsLogger


class CountEnds(Callback):
    def __init__(self) -> None:
        self.ends = 0

    def on_episode_end(self, *, metrics_logger: Any, **kwargs: Any) -> None:
        self.ends += 1
        metrics_logger.log_value("ends", 1, reduce="sum")


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_metrics_state_and_count_come_back(hookbus_recording: Path, backend: str) -> None:
    result = replay_into(hookbus_recording, CountEnds, backend=backend)
    assert isinstance(result, ReplayResult)
    (callback,) = result.callbacks
    ends = sum(isinstance(e, EpisodeEnd) for e in read_recording(hookbus_recording))
    assert callback.ends == ends
    assert result.metrics == {"ends": ends}
    assert result.logger.peek("ends") == ends
    assert result.events == len(list(read_recording(hookbus_recording)))


def test_a_damaged_file_leaves_the_prefix_metrics_in_the_given_logger(
    hookbus_recording: Path, tmp_path: Path
) -> None:
    data = hookbus_recording.read_bytes()
    torn = tmp_path / "torn.msgpack"
    torn.write_bytes(data[: len(data) // 2])
    logger = MetricsLogger()
    with pytest.raises(RecordingError, match="truncated frame"):
        replay_into(torn, CountEnds, metrics_logger=logger)
    prefix: list[Any] = []
    with pytest.raises(RecordingError):
        prefix.extend(read_recording(torn))
    assert 0 < logger.peek("ends") == sum(isinstance(e, EpisodeEnd) for e in prefix)


def test_trio_missing_is_a_config_error_naming_the_extra(hookbus_recording: Path) -> None:
    """In a process where trio cannot be imported (as when it is not installed)."""
    code = f"""
import sys
sys.modules["trio"] = None  # what a missing package looks like to an import
from hookbus.kernel import ConfigError, replay_into
try:
    replay_into({str(hookbus_recording)!r}, backend="trio")
except ConfigError as exc:
    print(type(exc).__name__, exc)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == (
        "ConfigError replay_into(backend='trio') needs trio, which cannot be imported: "
        'pip install "hookbus[trio]"'
    )


def test_an_unknown_backend_is_a_config_error_naming_both() -> None:
    with pytest.raises(ConfigError, match="backend 'asyncio' or 'trio', not 'curio'"):
        replay_into([], backend="curio")


def test_a_callbacks_own_lookup_error_stays_itself(hookbus_recording: Path) -> None:
    class Fails(Callback):
        def on_episode_end(self, **kwargs: Any) -> None:
            raise KeyError("the callback's own")

    with pytest.raises(KeyError, match="the callback's own"):
        replay_into(hookbus_recording, Fails, backend="trio")
