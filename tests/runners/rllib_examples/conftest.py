"""The ported scripts' fixtures."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.runners.rllib_examples.example_scripts import record_results


@pytest.fixture
def results(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """What the scripts' ``run_rllib_example_script_experiment`` calls return, in order."""
    return record_results(monkeypatch)


@pytest.fixture
def temporary_folders_in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scripts' ``save_to_path()`` with no path makes a folder in the system's
    temporary directory, as RLlib's: here the test's, so that nothing is left behind."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
