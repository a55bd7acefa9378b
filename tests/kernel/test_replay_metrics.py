"""replay_into(): replay from sync code and collect what the callbacks logged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hookbus.events import EpisodeEnd
from hookbus.kernel import Callback, RecordingError, ReplayResult, read_recording, replay_into
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
