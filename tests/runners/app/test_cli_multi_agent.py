"""hookbus inspect sums a multi-agent episode's agents' rewards into its return."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from hookbus.kernel import Recorder
from hookbus.runners.app._cli import main

sys.path.insert(0, str(Path(__file__).parents[2]))
from multi_agent_helpers import turn_based_run


def test_inspect_lists_multi_agent_returns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = turn_based_run()
    recorder = Recorder(tmp_path / "run.msgpack")
    for event in run.events:
        recorder.record(event=event)
    recorder.close()
    assert main(["inspect", str(tmp_path / "run.msgpack"), "--episodes", "3"]) == 0
    listed = re.findall(r"len +(\d+) +return +([-\d.]+) ", capsys.readouterr().out)
    assert [(int(n), float(r)) for n, r in listed] == [
        (len(e), e.get_return()) for e in run.episodes
    ]
