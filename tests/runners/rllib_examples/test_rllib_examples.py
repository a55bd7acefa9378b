"""RLlib's example scripts, their imports changed only, run on hookbus (stop criteria scaled).

Each script's header says which RLlib file it is and what changed. They run in this
process (``runpy``), as ``python script.py --flags`` would run them.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def run_script(name: str, *flags: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    monkeypatch.syspath_prepend(str(HERE))
    monkeypatch.setattr(sys, "argv", [name, *flags])
    return runpy.run_path(str(HERE / name), run_name="__main__")


def test_custom_evaluation(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The script calls RLlib's deprecated merge_and_log_n_dicts: it works, and warns.
    with pytest.warns(DeprecationWarning, match="merge_and_log_n_dicts"):
        run_script("custom_evaluation.py", "--stop-iters=2", monkeypatch=monkeypatch)
    out = capsys.readouterr().out
    assert "Training iteration 0 -> evaluation round 2" in out
    assert "iteration 2" in out
