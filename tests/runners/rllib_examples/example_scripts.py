"""Running the ported scripts as ``python script.py <options>`` would, for both test files."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path
from typing import Any

import pytest

import hookbus.runners

__all__ = ("HERE", "record_results", "run_script")

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # the scripts import rllib_example_envs, as workers do


def record_results(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Keep what the scripts' ``run_rllib_example_script_experiment`` calls return, in order."""
    returned: list[Any] = []
    run = hookbus.runners.run_rllib_example_script_experiment

    def recording(*args: Any, **kwargs: Any) -> Any:
        returned.append(run(*args, **kwargs))
        return returned[-1]

    monkeypatch.setattr(hookbus.runners, "run_rllib_example_script_experiment", recording)
    return returned


def run_script(name: str, *argv: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Run ``name`` as ``__main__`` with ``argv``; return its module globals."""
    monkeypatch.setattr(sys, "argv", [name, *argv])
    return runpy.run_path(str(HERE / name), run_name="__main__")
