"""Turn numpy values into plain Python ones, so that no numpy scalar reaches a user."""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

__all__ = ("plain",)


def plain(value: Any) -> Any:
    """Return ``value`` with numpy scalars and arrays turned into Python numbers and lists."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, dict):
        return {plain(key): plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple | deque):
        return [plain(item) for item in value]
    return value
