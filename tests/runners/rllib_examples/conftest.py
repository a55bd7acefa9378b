"""The ported scripts' fixtures."""

from __future__ import annotations

from typing import Any

import pytest

from tests.runners.rllib_examples.example_scripts import record_results


@pytest.fixture
def results(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """What the scripts' ``run_rllib_example_script_experiment`` calls return, in order."""
    return record_results(monkeypatch)
