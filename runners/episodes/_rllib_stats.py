"""RLlib 2.60's Stats as its MetricsLogger reduces and merges them, for replaying its runs.

A replay of an RLlib recording gives the handlers loggers that reduce as RLlib 2.60's do
(``ray/rllib/utils/metrics/stats/``), so that what they log replays to the numbers
``algo.train()`` reported. What a kind does at each step of RLlib's cycle:

- ``push``: a leaf (a logger handlers log into) takes a value. A mean keeps every value
  (the newest ``window``, if one); an unwindowed sum, min or max keeps one running value;
  an EMA updates its running value; a lifetime sum adds; NaNs are dropped where RLlib
  drops them (EMAs, lifetime sums; means and sums ignore them when reducing).
- ``handover``: an EnvRunner's ``get_metrics()`` (RLlib's ``reduce(compile=False)``) gives
  what this period holds, reduced (a mean of the period's window, the period's sum, ...),
  and empties the leaf; an EMA keeps its value, a lifetime sum starts again at 0.
- ``merge``: the Algorithm's root logger takes the handovers of every runner and period
  (``aggregate``): series kinds keep every handed value, so a mean of several runners is a
  mean of their means; an EMA collects the runners' EMAs; a lifetime sum adds them.
- ``compile``: the root's end of an iteration (``reduce(compile=True)``): a mean over
  everything merged (or logged) since the last one, a sum of it, and so on; then empty.
  A lifetime sum on the root is never emptied: it is the run's total.
- ``latest``: ``peek(latest_merged_only=True)``, what an evaluation round reports: only
  the values of the last merge.

Kinds RLlib refuses (``reduce="mean"`` with ``ema_coeff``, a window with an EMA, NaN in
percentiles) raise the ValueError RLlib raises. Throughputs are not replayed (they are
rates of wall-clock time).
"""

from __future__ import annotations

import math
import warnings
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

__all__ = ("KINDS", "RLlibStats", "make_stats")

NAN = float("nan")

DEFAULT_PERCENTILES: list[float] = [0, 50, 75, 90, 95, 99, 100]


def _isnan(value: Any) -> bool:
    try:
        return bool(np.isnan(value))
    except TypeError:  # not a number (an item)
        return False


def _window_reduce(fn: Callable[[Any], Any], values: Sequence[Any]) -> Any:
    """RLlib's ``SeriesStats.window_reduce``: NaN for no values or only NaNs."""
    if len(values) == 0 or bool(np.all(np.isnan(values))):
        return NAN
    return fn(values)


class RLlibStats:
    """One key's reduction, as one of RLlib 2.60's Stats classes (``make_stats`` picks it)."""

    kind = ""

    def __init__(self, *, root: bool, leaf: bool = True) -> None:
        self.root = root
        self.leaf = leaf

    def fresh(self, *, root: bool, leaf: bool) -> RLlibStats:
        """Return an empty Stats of the same settings (RLlib's ``clone``)."""
        raise NotImplementedError

    def push(self, value: Any) -> None:
        raise NotImplementedError

    def handover(self) -> RLlibStats:
        """Return what a leaf hands its aggregator at ``get_metrics()``, emptying it."""
        raise NotImplementedError

    def merge(self, incoming: list[RLlibStats]) -> None:
        raise NotImplementedError

    def compile(self) -> Any:
        """Return the reduced value and close the period (RLlib's ``reduce(compile=True)``)."""
        raise NotImplementedError

    def peek(self) -> Any:
        raise NotImplementedError

    def latest(self) -> Any:
        """Return the value of the last merge only (``peek(latest_merged_only=True)``)."""
        raise NotImplementedError


class _Series(RLlibStats):
    """Mean, sum, min and max: ``MeanStats``, ``SumStats``, ``MinStats``, ``MaxStats``."""

    _fns: ClassVar[dict[str, Callable[[Any], Any]]] = {
        "mean": np.nanmean,
        "sum": np.nansum,
        "min": np.nanmin,
        "max": np.nanmax,
    }

    def __init__(self, kind: str, window: int | None, *, root: bool, leaf: bool = True) -> None:
        super().__init__(root=root, leaf=leaf)
        self.kind = kind
        self.window = window
        self.fn = self._fns[kind]
        # A leaf with a window keeps its newest values only; an aggregator keeps every
        # value merged since its last compile (RLlib's root is not windowed).
        self.values: deque[Any] | list[Any] = self._empty()
        self.latest_merged: list[Any] | None = None

    def _empty(self) -> deque[Any] | list[Any]:
        return deque(maxlen=self.window) if self.window and self.leaf else []

    def fresh(self, *, root: bool, leaf: bool) -> _Series:
        return _Series(self.kind, self.window, root=root, leaf=leaf)

    def push(self, value: Any) -> None:
        if self.kind != "mean" and self.window is None:  # one running value
            self.values = [self.fn([self.values[0], value])] if self.values else [value]
        else:
            self.values.append(value)

    def _reduced(self) -> Any:
        values = self.values
        if self.kind != "mean" and self.window is None and len(values) <= 1:
            return values[0] if values else NAN
        return _window_reduce(self.fn, values)

    def handover(self) -> _Series:
        out = self.fresh(root=self.root, leaf=self.leaf)
        if self.kind in ("min", "max") and self.window is None:
            out.values = list(self.values)  # its running value, or nothing
        else:
            out.values = [self._reduced()]
        self.values = self._empty()
        return out

    def merge(self, incoming: list[RLlibStats]) -> None:
        merged = [v for s in incoming for v in s.values]  # type: ignore[attr-defined]
        self.values = [*self.values, *merged]
        self.latest_merged = merged

    def compile(self) -> Any:
        value = self._reduced()
        self.values = self._empty()
        return value

    def peek(self) -> Any:
        return self.values[0] if len(self.values) == 1 else _window_reduce(self.fn, self.values)

    def latest(self) -> Any:
        if self.latest_merged is None:
            return NAN
        return _window_reduce(self.fn, self.latest_merged)


class _Ema(RLlibStats):
    """``EmaStats``: a running EMA per leaf; an aggregator averages the EMAs it merged."""

    kind = "ema"

    def __init__(self, coeff: float, *, root: bool, leaf: bool = True) -> None:
        super().__init__(root=root, leaf=leaf)
        self.coeff = coeff
        self.value: Any = NAN
        self.to_merge: list[Any] = []
        self.latest_merged: list[Any] | None = None

    def fresh(self, *, root: bool, leaf: bool) -> _Ema:
        return _Ema(self.coeff, root=root, leaf=leaf)

    def push(self, value: Any) -> None:
        if _isnan(value):
            return
        if _isnan(self.value):
            self.value = value
        else:
            self.value = self.coeff * value + (1.0 - self.coeff) * self.value

    def handover(self) -> _Ema:
        out = self.fresh(root=self.root, leaf=self.leaf)
        out.value = self.value  # a leaf's EMA runs on across periods
        return out

    def merge(self, incoming: list[RLlibStats]) -> None:
        values = [s.value for s in incoming]  # type: ignore[attr-defined]
        if values:
            self.to_merge.extend(values)
            self.latest_merged = values

    def compile(self) -> Any:
        value = self.peek()
        self.to_merge = []
        return value

    def peek(self) -> Any:
        return _nanmean(self.to_merge) if self.to_merge else self.value

    def latest(self) -> Any:
        return _nanmean(self.latest_merged) if self.latest_merged else NAN


class _LifetimeSum(RLlibStats):
    """``LifetimeSumStats``: leaves hand over what they added; the root keeps the total."""

    kind = "lifetime_sum"

    def __init__(self, *, root: bool, leaf: bool = True) -> None:
        super().__init__(root=root, leaf=leaf)
        self.total: Any = 0.0
        self.latest_merged: Any = None

    def fresh(self, *, root: bool, leaf: bool) -> _LifetimeSum:
        return _LifetimeSum(root=root, leaf=leaf)

    def push(self, value: Any) -> None:
        if not _isnan(value):
            self.total += value

    def handover(self) -> _LifetimeSum:
        out = self.fresh(root=self.root, leaf=self.leaf)
        out.total = self.total
        if not self.root:
            self.total = 0.0
        return out

    def merge(self, incoming: list[RLlibStats]) -> None:
        added = sum(s.total for s in incoming)  # type: ignore[attr-defined]
        self.total += added
        self.latest_merged = added

    def compile(self) -> Any:
        value = self.total
        if not self.root:
            self.total = 0.0
        return value

    def peek(self) -> Any:
        return self.total

    def latest(self) -> Any:
        return 0.0 if self.latest_merged is None else self.latest_merged


class _Item(RLlibStats):
    """``ItemStats``: one item, handed over and compiled once, then None."""

    kind = "item"

    def __init__(self, *, root: bool, leaf: bool = True) -> None:
        super().__init__(root=root, leaf=leaf)
        self.item: Any = None

    def fresh(self, *, root: bool, leaf: bool) -> _Item:
        return _Item(root=root, leaf=leaf)

    def push(self, value: Any) -> None:
        self.item = value

    def handover(self) -> _Item:
        out = self.fresh(root=self.root, leaf=self.leaf)
        out.item, self.item = self.item, None
        return out

    def merge(self, incoming: list[RLlibStats]) -> None:
        # RLlib asserts a single incoming item (two runners logging one fail there); the
        # last one is what a replay keeps.
        if incoming:
            self.item = incoming[-1].item  # type: ignore[attr-defined]

    def compile(self) -> Any:
        item, self.item = self.item, None
        return item

    def peek(self) -> Any:
        return self.item

    def latest(self) -> Any:
        return self.item


class _Listed(RLlibStats):
    """``ItemSeriesStats`` (the items) and ``PercentilesStats`` (percentiles of values)."""

    def __init__(
        self,
        kind: str,
        window: int | None,
        percentiles: list[float] | None,
        *,
        root: bool,
        leaf: bool = True,
    ) -> None:
        super().__init__(root=root, leaf=leaf)
        self.kind = kind
        self.window = window
        self.percentiles = percentiles
        self.values: deque[Any] | list[Any] = self._empty()
        self.latest_merged: list[Any] | None = None

    def _empty(self) -> deque[Any] | list[Any]:
        return deque(maxlen=self.window) if self.window and self.leaf else []

    def fresh(self, *, root: bool, leaf: bool) -> _Listed:
        return _Listed(self.kind, self.window, self.percentiles, root=root, leaf=leaf)

    def push(self, value: Any) -> None:
        if self.kind == "percentiles" and _isnan(value):
            raise ValueError("NaN values are not allowed in PercentilesStats")
        self.values.append(value)

    def handover(self) -> _Listed:
        out = self.fresh(root=self.root, leaf=self.leaf)
        out.values = list(self.values)
        self.values = self._empty()
        return out

    def merge(self, incoming: list[RLlibStats]) -> None:
        merged = [v for s in incoming for v in s.values]  # type: ignore[attr-defined]
        self.values = [*self.values, *merged]
        self.latest_merged = merged

    def _of(self, values: Sequence[Any]) -> Any:
        if self.kind == "percentiles":
            return percentiles_of(sorted(values), self.percentiles or DEFAULT_PERCENTILES)
        return list(values)

    def compile(self) -> Any:
        value = self._of(self.values)
        self.values = self._empty()
        return value

    def peek(self) -> Any:
        if self.kind == "item_series" and not self.values:
            return NAN
        return self._of(self.values)

    def latest(self) -> Any:
        if self.latest_merged is None:
            return NAN if self.kind == "item_series" else self._of([])
        return self._of(self.latest_merged)


def percentiles_of(ordered: Sequence[Any], percentiles: Sequence[float]) -> dict[Any, Any]:
    """RLlib's ``compute_percentiles``: linear interpolation in an ordered list."""
    n = len(ordered)
    if n == 0:
        return dict.fromkeys(percentiles)
    found: dict[Any, Any] = {}
    for p in percentiles:
        index = (p / 100) * (n - 1)
        low = int(index)
        if float(index).is_integer():
            found[p] = ordered[low]
        else:
            weight = index - low
            found[p] = ordered[low] * (1 - weight) + ordered[low + 1] * weight
    return found


def _nanmean(values: Sequence[Any]) -> Any:
    with warnings.catch_warnings():  # all NaN: NaN, as RLlib (which silences it too)
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(values)


KINDS = ("mean", "ema", "min", "max", "sum", "lifetime_sum", "percentiles", "item", "item_series")
"""The ``reduce`` names RLlib 2.60's default Stats lookup has."""


def make_stats(
    reduce: str,
    window: float | None,
    ema_coeff: float | None,
    percentiles: Sequence[float] | bool | None,
    *,
    root: bool,
) -> RLlibStats:
    """Return a new leaf Stats for a key's first log, refusing what RLlib 2.60 refuses."""
    if percentiles and reduce != "percentiles":
        raise ValueError("percentiles is only supported for reduce=percentiles")
    if reduce == "ema" and window is not None:
        raise ValueError(
            "window is not supported for ema reduction. If you want to use a window, use "
            "mean reduction instead (RLlib 2.60)"
        )
    if reduce == "mean" and ema_coeff is not None:
        raise ValueError(
            "ema_coeff is not supported for mean reduction. Use `reduce='ema'` instead (RLlib 2.60)"
        )
    size = None if window is None or window == math.inf else int(window)
    if reduce in ("mean", "sum", "min", "max"):
        return _Series(reduce, size, root=root)
    if reduce == "ema":
        return _Ema(0.01 if ema_coeff is None else float(ema_coeff), root=root)
    if reduce == "lifetime_sum":
        return _LifetimeSum(root=root)
    if reduce == "item":
        return _Item(root=root)
    if reduce in ("item_series", "percentiles"):
        chosen: list[float] | None = None
        if reduce == "percentiles":
            given = DEFAULT_PERCENTILES if percentiles in (None, True) else percentiles
            chosen = list(given)  # type: ignore[arg-type]
        return _Listed(reduce, size, chosen, root=root)
    allowed = ", ".join(map(repr, KINDS))
    raise ValueError(f"Invalid reduce method {reduce!r}; RLlib 2.60 knows {allowed}")
