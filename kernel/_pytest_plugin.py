"""hookbus's pytest plugin (entry point ``pytest11``): fixtures for testing subscribers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ._bus import Bus

__all__ = ("hookbus_bus",)


@pytest.fixture
def hookbus_bus() -> Iterator[Bus]:
    """Give an open, empty Bus; it is closed after the test."""
    with Bus() as bus:
        yield bus
