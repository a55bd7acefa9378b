"""Fixtures for the metrics tests: a controllable clock for throughputs and timers."""

from __future__ import annotations

import pytest


class FakeClock:
    """Stand in for ``time.perf_counter``: time moves only when a test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """Give a fake clock that the metrics modules read instead of ``time.perf_counter``."""
    fake = FakeClock()
    for module in ("_logger", "_scalar", "_stats"):
        monkeypatch.setattr(f"hookbus.metrics.{module}.perf_counter", fake)
    return fake
