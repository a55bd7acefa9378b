"""Merge the new window values of several parallel components into one sequence.

This is RLlib's ``merge_in_parallel`` for windowed stats. The runners' values are lined up
by age, newest last (right-aligned): the values of the same age across runners form a
group. For ``mean``/``min``/``max`` each group is reduced and its result repeated once per
member, so every runner weighs the same; for ``sum`` the group's values stay as they are
(the last runner's first, as RLlib orders them). Groups follow each other oldest to newest,
and only the newest ``window`` values of the result matter. Example (RLlib's documented
numbers), window 3, means: ``[200, 300, 400]`` and ``[250, 350, 450]`` give
``[..., 325, 325, 425, 425]``, whose last three average to 391.67.

Payloads are float arrays (what is new since the last reduce, at most a window). A numpy
call costs about a microsecond whatever its size, so small merges (the common case: a few
episodes per runner per iteration) run in plain Python and larger ones in numpy.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ("EMPTY", "Floats", "Merged", "Values", "merge_parallel", "merge_parallel_numpy")

Floats = npt.NDArray[np.float64]
Values = Sequence[float]
Merged = Floats | Values  # what merge_parallel returns: a list, or an array from numpy

_PYTHON_UNTIL = 64  # values in a merge up to which plain Python beats numpy (measured)

#: The shared "nothing new" payload (read-only, so that no receiver can write into it).
EMPTY: Floats = np.empty(0, dtype=np.float64)
EMPTY.flags.writeable = False
_PAD = {"mean": 0.0, "sum": np.nan, "min": np.inf, "max": -np.inf}
_REDUCERS = {"mean": np.add, "min": np.minimum, "max": np.maximum}


def merge_parallel(reduce: str, payloads: Sequence[Values], window: int) -> Merged:
    """Return the merged sequence of ``payloads`` (oldest first, at most ``window`` long)."""
    arrays = [p for p in payloads if len(p)]
    if len(arrays) < 2:
        return arrays[0][-window:] if arrays else EMPTY
    lengths = [len(a) for a in arrays]
    if sum(lengths) > _PYTHON_UNTIL:
        return merge_parallel_numpy(reduce, arrays, lengths, window)
    arrays = [a if type(a) is list else _as_list(a) for a in arrays]
    if reduce == "sum":
        return _interleave(arrays, lengths)[-window:]
    if min(lengths) == max(lengths):
        return _equal_groups(reduce, arrays)[-window:]
    return _ragged_groups(reduce, arrays, lengths)[-window:]


def _as_list(values: Values) -> list[float]:
    if isinstance(values, np.ndarray):
        as_list: list[float] = values.tolist()
        return as_list
    return list(values)


def _equal_groups(reduce: str, arrays: Sequence[Values]) -> list[float]:
    # The common case, every runner with as many new values: one loop per reduce kind.
    merged: list[float] = []
    size = len(arrays)
    if reduce == "mean":
        for column in zip(*arrays, strict=True):
            merged += [sum(column) / size] * size
    elif reduce == "min":
        for column in zip(*arrays, strict=True):
            merged += [min(column)] * size
    else:
        for column in zip(*arrays, strict=True):
            merged += [max(column)] * size
    return merged


def _ragged_groups(reduce: str, arrays: Sequence[Values], lengths: list[int]) -> list[float]:
    merged: list[float] = []
    for age in range(max(lengths), 0, -1):
        column = [a[n - age] for a, n in zip(arrays, lengths, strict=True) if n >= age]
        if reduce == "mean":
            value = sum(column) / len(column)
        else:
            value = min(column) if reduce == "min" else max(column)
        merged += [value] * len(column)
    return merged


def _interleave(arrays: Sequence[Values], lengths: list[int]) -> list[float]:
    merged: list[float] = []
    for age in range(max(lengths), 0, -1):
        merged += [a[n - age] for a, n in zip(arrays[::-1], lengths[::-1], strict=True) if n >= age]
    return merged


def merge_parallel_numpy(
    reduce: str, arrays: Sequence[Values], lengths: list[int], window: int
) -> Floats:
    """Return the newest ``window`` values of the merged sequence of non-empty ``arrays``."""
    # Only the newest groups can reach the window: each holds at least one value, and
    # len(arrays) values when every runner has one of that age.
    longest = max(lengths)
    ages = min(longest, window)
    if reduce == "sum":
        table = _right_aligned(arrays[::-1], lengths[::-1], ages, np.nan)
        flat = table.T.ravel()
        # NaN marks padding: a window never holds a NaN (they are dropped when logged).
        merged = flat if min(lengths) >= ages else flat[~np.isnan(flat)]
        return merged[-window:]
    equal = min(lengths) >= ages
    if equal:
        ages = min(ages, -(-window // len(arrays)))
    table = _right_aligned(arrays, lengths, ages, _PAD[reduce])
    groups = _REDUCERS[reduce].reduce(table, axis=0)
    if equal:  # every runner in every group
        if reduce == "mean":
            groups /= len(arrays)
        return np.repeat(groups, len(arrays))[-window:]
    # Group sizes: a runner with n values is in the last n groups.
    sizes = np.bincount([max(ages - n, 0) for n in lengths], minlength=ages).cumsum()
    if reduce == "mean":
        groups /= sizes
    return np.repeat(groups, sizes)[-window:]


def _right_aligned(arrays: Sequence[Values], lengths: list[int], ages: int, pad: float) -> Floats:
    """Return the newest ``ages`` values of each array as the rows of a table, padded left."""
    longest = max(lengths)
    if min(lengths) == longest:
        table = np.concatenate(arrays, dtype=np.float64).reshape(len(arrays), longest)
        return table if ages == longest else table[:, longest - ages :]
    table = np.full((len(arrays), ages), pad)
    for row, values, n in zip(table, arrays, lengths, strict=True):
        if n >= ages:
            row[:] = values[n - ages :]
        else:
            row[ages - n :] = values
    return table
