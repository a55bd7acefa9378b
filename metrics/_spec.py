"""Check a key's settings once, at its first log, and put them in one canonical form.

The canonical form is a plain dict (the *spec*) that travels in snapshots and states, so that
the receiving side rebuilds the same reduction with ``Stats(**spec_settings(spec))``. It is
canonical in that two ways of asking for the same reduction give the same spec: ``"mean"``
without a window becomes ``"ema"`` with its coefficient, and ``None`` becomes
``"item_series"`` (the name RLlib gave it later).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import numpy as np

__all__ = (
    "DEFAULT_EMA_COEFF",
    "DEFAULT_PERCENTILES",
    "DEFAULT_THROUGHPUT_EMA_COEFF",
    "ITEM_KINDS",
    "REDUCE_NAMES",
    "as_block",
    "bad_value",
    "check_numbers",
    "checked_spec",
    "is_number",
    "make_spec",
    "spec_settings",
)

#: Every value ``reduce`` accepts (``None`` is a list of items, like ``"item_series"``).
REDUCE_NAMES: tuple[str | None, ...] = (
    "mean",
    "ema",
    "min",
    "max",
    "sum",
    "lifetime_sum",
    "item",
    "item_series",
    "percentiles",
    None,
)
DEFAULT_EMA_COEFF = 0.01
DEFAULT_THROUGHPUT_EMA_COEFF = 0.05
DEFAULT_PERCENTILES: tuple[float, ...] = (0, 50, 75, 90, 95, 99, 100)
#: The kinds that take any object, not only numbers.
ITEM_KINDS = ("item", "item_series")

_WINDOWED = ("mean", "min", "max", "sum", "item_series", "percentiles")
_SUM_LIKE = ("sum", "lifetime_sum")
# The kind whose unwindowed form keeps every value until the next reduce(): it is emptied on
# every reduce() whatever clear_on_reduce says, or memory would grow without bound.
# (Percentiles would too, so they need a window, as in RLlib.)
_LISTS = ("item_series",)


def make_spec(
    reduce: str | None = "mean",
    *,
    window: float | None = None,
    ema_coeff: float | None = None,
    clear_on_reduce: bool = False,
    with_throughput: bool = False,
    throughput_ema_coeff: float | None = None,
    percentiles: Sequence[float] | bool | None = None,
) -> dict[str, Any]:
    """Validate one key's settings and return them in canonical form.

    Raises ValueError naming the bad value and what is allowed.
    """
    if reduce is None:  # RLlib 2.4x: reduce=None with percentiles asks for percentiles
        reduce = "item_series" if percentiles in (None, False) else "percentiles"
    if reduce not in REDUCE_NAMES:
        allowed = ", ".join(repr(name) for name in REDUCE_NAMES)
        raise ValueError(f"unknown reduce={reduce!r}; allowed: {allowed}")
    size = _check_window(reduce, window)
    if reduce == "percentiles" and size is None:
        raise ValueError(
            f"reduce='percentiles' needs a finite window, not window={window!r}: exact "
            "percentiles keep every value of the window, so without one memory would grow "
            "without bound; give e.g. window=1000 (as RLlib requires)"
        )
    if size is not None and ema_coeff is not None:
        raise ValueError(
            f"window={window!r} and ema_coeff={ema_coeff!r} exclude each other: "
            "a mean is either over a window or an exponential moving average"
        )
    throughput = _check_throughput(reduce, size, with_throughput)
    if reduce == "mean" and size is None:
        reduce = "ema"
    if reduce == "ema":
        ema_coeff = _check_coeff("ema_coeff", DEFAULT_EMA_COEFF if ema_coeff is None else ema_coeff)
    elif ema_coeff is not None:
        raise ValueError(
            f"ema_coeff={ema_coeff!r} is only allowed with reduce='mean' or 'ema', "
            f"not reduce={reduce!r}"
        )
    clear = _check_clear(reduce, size, clear_on_reduce)
    return {
        # The kind names the implementation: equal kinds merge, others refuse to.
        "kind": reduce + ("[window]" if size else "") + ("+throughput" if throughput else ""),
        "reduce": reduce,
        "window": size,
        "ema_coeff": ema_coeff,
        "clear_on_reduce": clear,
        "with_throughput": throughput,
        "throughput_ema_coeff": _check_coeff(
            "throughput_ema_coeff",
            DEFAULT_THROUGHPUT_EMA_COEFF if throughput_ema_coeff is None else throughput_ema_coeff,
        ),
        "percentiles": _check_percentiles(reduce, percentiles),
        # Whether the values are whole numbers, learnt from the first value: a float window
        # then still reports a min, max or sum of ints as an int. None until known.
        "ints": None,
    }


def spec_settings(spec: Mapping[str, Any]) -> dict[str, Any]:
    """Return the keyword arguments of ``Stats`` that rebuild ``spec``."""
    return {name: spec[name] for name in _SETTINGS}


def checked_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    """Validate a spec received from elsewhere (a snapshot, a state); return a fresh copy."""
    try:
        checked = make_spec(**spec_settings(spec))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a valid metrics spec: {spec!r}") from exc
    ints = spec.get("ints")
    checked["ints"] = ints if ints is None else bool(ints)
    return checked


_SETTINGS = (
    "reduce",
    "window",
    "ema_coeff",
    "clear_on_reduce",
    "with_throughput",
    "throughput_ema_coeff",
    "percentiles",
)


def _check_window(reduce: str, window: float | None) -> int | None:
    if window is None:
        return None
    if window == math.inf and reduce != "mean":
        return None  # an infinite window is no window (RLlib accepts float("inf") too)
    if window == math.inf:
        raise ValueError(
            "window=inf is not allowed with reduce='mean': a windowed mean keeps its window "
            "in memory; give a finite window, or no window for an EMA"
        )
    if reduce not in _WINDOWED:
        allowed = ", ".join(repr(name) for name in _WINDOWED)
        raise ValueError(
            f"window={window!r} is not allowed with reduce={reduce!r}; "
            f"windows go with reduce={allowed}"
        )
    if isinstance(window, bool) or not isinstance(window, int | float) or window != int(window):
        raise ValueError(f"window={window!r} must be a positive whole number or None")
    if window < 1:
        raise ValueError(f"window={window!r} must be a positive whole number or None")
    return int(window)


def _check_coeff(name: str, coeff: float) -> float:
    if isinstance(coeff, bool) or not isinstance(coeff, int | float) or not 0 < coeff <= 1:
        raise ValueError(f"{name}={coeff!r} must be a number in (0, 1]")
    return float(coeff)


def _check_clear(reduce: str, size: int | None, clear_on_reduce: bool) -> bool:
    if not isinstance(clear_on_reduce, bool):
        raise ValueError(f"clear_on_reduce={clear_on_reduce!r} must be True or False")
    if reduce == "lifetime_sum" and clear_on_reduce:
        raise ValueError(
            "clear_on_reduce=True contradicts reduce='lifetime_sum' (a lifetime total is "
            "never cleared); use reduce='sum' for a per-reduce total"
        )
    return clear_on_reduce or (reduce in _LISTS and size is None)


def _check_throughput(reduce: str, size: int | None, with_throughput: bool) -> bool:
    if not isinstance(with_throughput, bool):
        raise ValueError(f"with_throughput={with_throughput!r} must be True or False")
    if with_throughput and (reduce not in _SUM_LIKE or size is not None):
        raise ValueError(
            f"with_throughput=True is not allowed with reduce={reduce!r}, window={size!r}; "
            "throughputs go with reduce='sum' or 'lifetime_sum' and no window"
        )
    return with_throughput


def _check_percentiles(
    reduce: str, percentiles: Sequence[float] | bool | None
) -> list[float] | None:
    if reduce != "percentiles":
        if percentiles not in (None, False):
            raise ValueError(
                f"percentiles={percentiles!r} is only allowed with reduce='percentiles' "
                f"(or None), not reduce={reduce!r}"
            )
        return None
    if percentiles in (None, True):
        return list(DEFAULT_PERCENTILES)
    if isinstance(percentiles, bool | str) or not isinstance(percentiles, Sequence):
        raise ValueError(f"percentiles={percentiles!r} must be a list of numbers in [0, 100]")
    for p in percentiles:
        if isinstance(p, bool) or not isinstance(p, int | float) or not 0 <= p <= 100:
            raise ValueError(
                f"percentiles={percentiles!r} holds {p!r}; each must be a number in [0, 100]"
            )
    return list(percentiles)


def is_number(value: Any) -> bool:
    """Whether ``value`` is a real number a numeric kind takes (a 0-d array included)."""
    if isinstance(value, numbers.Real):
        return True
    return isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "biuf"


def as_block(key: Any, values: Any) -> Sequence[Any]:
    """Return ``values``, a block of values to log under ``key``, as a sequence.

    A list, tuple or array of one or more dimensions is taken as it is, another iterable
    (a generator) is listed; a single value, a string, bytes or a mapping is a TypeError.
    """
    if isinstance(values, np.ndarray):  # it has len() and slices as a sequence does
        if values.ndim:
            return cast(Sequence[Any], values)
    elif isinstance(values, Sequence) and not isinstance(values, str | bytes):
        return values
    elif isinstance(values, Iterable) and not isinstance(values, str | bytes | Mapping):
        return list(values)
    raise TypeError(
        f"log_values takes a block of values to log under {key!r} (a list, tuple, array or "
        f"other iterable; log_value logs one value), got {values!r}"
    )


def check_numbers(key: Any, values: Sequence[Any], reduce: str) -> None:
    """Raise ``bad_value`` for the first of ``values`` a numeric kind cannot take."""
    try:
        block = np.asarray(values)
    except (TypeError, ValueError):  # ragged, or objects numpy cannot hold
        pass
    else:  # the usual case, one conversion: a 1-D array of numbers (bools included)
        if block.ndim == 1 and block.dtype.kind in "biuf":
            return
    for value in values:
        if not is_number(value):
            raise bad_value(key, value, reduce)


def bad_value(key: Any, value: Any, reduce: str) -> TypeError:
    """Return the TypeError for a value that a numeric kind cannot take."""
    return TypeError(
        f"cannot log {value!r} under {key!r}: reduce={reduce!r} takes real numbers; "
        "use reduce='item' or 'item_series' for other values"
    )
