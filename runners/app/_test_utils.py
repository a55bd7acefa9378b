"""RLlib's small test helpers that its example scripts import: ``check`` and ``convert_to_numpy``.

RLlib keeps them in ``ray.rllib.utils.test_utils`` and ``ray.rllib.utils.numpy``; scripts
use them to compare weights before and after a restore. hookbus's modules hold numpy
arrays already, so ``convert_to_numpy`` only turns tensors of a framework (anything with
``detach()``/``numpy()``) into arrays, and narrows 64-bit types as RLlib's does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ("check", "convert_to_numpy")


def check(
    x: Any,
    y: Any,
    decimals: int = 5,
    atol: float | None = None,
    rtol: float | None = None,
    false: bool = False,
) -> None:
    """Assert that ``x`` and ``y`` match (or, with ``false=True``, differ), element by element.

    Dicts match key by key, lists and tuples item by item, numbers and arrays to
    ``decimals`` places (or within ``atol``/``rtol`` when given), anything else by ``==``.
    """
    if isinstance(x, Mapping):
        assert isinstance(y, Mapping), f"{y!r} is not a dict, as {x!r} is"
        assert set(x) == set(y), f"keys differ: {sorted(x, key=str)} vs {sorted(y, key=str)}"
        for key, value in x.items():
            check(value, y[key], decimals, atol, rtol, false)
    elif isinstance(x, list | tuple):
        assert isinstance(y, list | tuple), f"{y!r} is not a list or tuple, as {x!r} is"
        assert len(x) == len(y), f"lengths differ: {len(x)} vs {len(y)}"
        for a, b in zip(x, y, strict=True):
            check(a, b, decimals, atol, rtol, false)
    elif _numeric(x) and _numeric(y):
        _check_numbers(np.asarray(x), np.asarray(y), decimals, atol, rtol, false)
    elif false:
        assert x != y, f"{x!r} equals {y!r}"
    else:
        assert x == y, f"{x!r} does not equal {y!r}"


def _numeric(value: Any) -> bool:
    if isinstance(value, bool | str | bytes) or value is None:
        return False
    return isinstance(value, int | float | np.ndarray | np.number)


def _check_numbers(
    x: Any, y: Any, decimals: int, atol: float | None, rtol: float | None, false: bool
) -> None:
    try:
        if atol is not None or rtol is not None:
            np.testing.assert_allclose(x, y, rtol=rtol or 1e-7, atol=atol or 0.0)
        else:
            np.testing.assert_almost_equal(x, y, decimal=decimals)
    except AssertionError:
        if not false:
            raise
    else:
        assert not false, f"{x!r} and {y!r} match, and they should not"


def convert_to_numpy(x: Any, reduce_type: bool = True) -> Any:
    """Return ``x`` with every tensor in it (dicts, lists and tuples walked) a numpy array."""
    if isinstance(x, Mapping):
        return {key: convert_to_numpy(value, reduce_type) for key, value in x.items()}
    if isinstance(x, list | tuple):
        return type(x)(convert_to_numpy(value, reduce_type) for value in x)
    if hasattr(x, "detach") and hasattr(x, "numpy"):  # a torch tensor, on the CPU
        x = x.detach().cpu().numpy()
    if reduce_type and isinstance(x, np.ndarray):
        if np.issubdtype(x.dtype, np.floating):
            return x.astype(np.float32)
        if np.issubdtype(x.dtype, np.integer):
            return x.astype(np.int32)
    return x
