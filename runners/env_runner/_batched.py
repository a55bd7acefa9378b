"""A vector env's batched observations and infos, one sub-env's row at a time."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._types import Batched

__all__ = ("sub_info", "with_rows")


def with_rows(batch: Batched, rows: dict[int, Any]) -> Batched:
    """Return a copy of a batched observation (an array, or a dict or tuple of them, as a
    Dict or Tuple space batches) with row ``i`` replaced by ``rows[i]``."""
    if isinstance(batch, dict):
        return {k: with_rows(v, {i: row[k] for i, row in rows.items()}) for k, v in batch.items()}
    if isinstance(batch, tuple):
        return tuple(
            with_rows(v, {i: row[j] for i, row in rows.items()}) for j, v in enumerate(batch)
        )
    batch = np.array(batch, copy=True)
    for i, row in rows.items():
        batch[i] = row
    return batch


def sub_info(infos: dict[str, Any], i: int) -> dict[str, Any]:
    """Pick sub-env ``i``'s info out of a vector env's batched info dict."""
    info = {}
    for key, values in infos.items():
        if key.startswith("_"):
            continue
        mask = infos.get("_" + key)
        if mask is not None and not mask[i]:
            continue
        info[key] = sub_info(values, i) if isinstance(values, dict) else values[i]
    return info
