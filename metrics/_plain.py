"""Turn numpy values into plain Python ones, so that no numpy scalar reaches a user."""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

__all__ = ("plain", "plain_items")


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


def plain_items(value: Any) -> Any:
    """Return logged items as ``plain`` does, except that arrays stay the arrays logged.

    Items (``reduce="item"``, ``None``/``"item_series"``) are often images or videos, which
    Tune's and W&B's loggers recognise as numpy arrays by their dimensions: a nested list
    would reach them as a list of numbers. Numpy scalars and 0-d arrays still become Python
    numbers, and containers plain lists and dicts.
    """
    if isinstance(value, np.ndarray):
        return value if value.ndim else value.item()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {plain(key): plain_items(item) for key, item in value.items()}
    if isinstance(value, list | tuple | deque):
        return [plain_items(item) for item in value]
    return value
