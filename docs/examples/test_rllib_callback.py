"""Test a callback written for RLlib runs against a recording of one: no Ray, no torch.

The recording (``rllib_cartpole.msgpack``) was made once, in a real RLlib run, by
``bridge_rllib.py --record``; from then on the callback's tests replay it in milliseconds.
Run it as a test file (``pytest docs/examples/test_rllib_callback.py``) or as a script.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hookbus.events import EpisodeEnd, EpisodeStep, TrainResult
from hookbus.kernel import check_lifecycle, read_recording

sys.path.insert(0, str(Path(__file__).parent))  # the callback under test lives beside us
from pole_moves import RECORDING, PoleMoves


@pytest.fixture(scope="module")
def events() -> list[Any]:
    return list(read_recording(RECORDING))


def test_the_metric_is_what_rllib_reported(
    events: list[Any], hookbus_replay: Callable[..., Any]
) -> None:
    # RLlib's results, as the driver recorded them with every iteration.
    reported = [
        e.result["env_runners"]["tilting_steps"] for e in events if isinstance(e, TrainResult)
    ]
    result = hookbus_replay(RECORDING, PoleMoves)  # RLlib's reduce cycle, per iteration
    assert [it["env_runners"]["tilting_steps"] for it in result.iterations] == reported


def test_tilting_steps_never_outnumber_steps(
    events: list[Any], hookbus_replay: Callable[..., Any]
) -> None:
    steps = sum(isinstance(e, EpisodeStep) for e in events)
    result = hookbus_replay(RECORDING, PoleMoves, merge="pooled")  # one logger: the total
    assert 0 < result.metrics["tilting_steps"] < steps


def test_the_stream_keeps_hookbus_lifecycle_rules(events: list[Any]) -> None:
    summary = check_lifecycle(events)
    assert summary.episodes >= sum(isinstance(e, EpisodeEnd) for e in events)


if __name__ == "__main__":
    # A fresh interpreter, as `pytest` itself would be; -p no:cacheprovider leaves no
    # .pytest_cache behind.
    command = [sys.executable, "-m", "pytest", __file__, "-q", "-p", "no:cacheprovider"]
    sys.exit(subprocess.run(command, check=False).returncode)
