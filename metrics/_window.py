"""The windowed kinds (mean/min/max/sum/percentiles over the last N values) and item lists.

Numeric windows live in a fixed numpy buffer of ``window + max(window, 32)`` float64 slots,
allocated once. Values are written at ``_pos``, one after the other; when the buffer is full
the last ``window`` values move to the front (one slice copy every ``window`` pushes or
more). So the window is always the contiguous slice ``_buf[_pos - n:_pos]``, oldest first,
which numpy reduces without gathering, and the values logged since the last reduce() are
the end of that slice. ``_mark`` is where ``_pos`` stood at the last reduce() (it moves
with the compaction and may go negative: then more than a window is new).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from itertools import islice
from typing import Any, ClassVar

import numpy as np

from ._merge import EMPTY, Floats, Merged, merge_parallel
from ._plain import plain_items
from ._stats import Stats

__all__ = ()

_LIST_UNTIL = 16  # new values up to which reduce() hands over a list rather than an array


class _WindowStats(Stats):
    """reduce="mean"/"min"/"max"/"sum" with a window: over the last ``window`` values."""

    __slots__ = ("_buf", "_cap", "_clear", "_ints", "_mark", "_pos", "_window")
    _kinds: ClassVar[tuple[str, ...]] = (
        "mean[window]",
        "min[window]",
        "max[window]",
        "sum[window]",
    )

    def _setup(self) -> None:
        window: int = self._spec["window"]
        self._window = window
        self._cap = window + max(window, 32)
        self._buf: Floats = np.empty(self._cap, dtype=np.float64)
        self._pos = 0
        self._mark = 0
        self._ints: bool | None = self._spec["ints"]
        self._clear: bool = self._spec["clear_on_reduce"]

    def push(self, value: Any) -> None:
        if value == value:  # drop NaN
            if self._ints is None:
                self._learn_type(value)
            pos = self._pos
            self._buf[pos] = value
            pos += 1
            if pos == self._cap:
                pos = self._compact()
            self._pos = pos

    def push_many(self, values: Sequence[Any]) -> None:
        # What len(values) push() calls do, a block at a time: NaNs dropped, the type
        # learnt from the first value kept, the window compacted where push() would.
        if not len(values):
            return
        block = np.asarray(values, dtype=np.float64)
        if block.ndim != 1:
            raise TypeError(f"expected one number per value, got an array of shape {block.shape}")
        kept = block == block
        first = int(kept.argmax())  # the first value that is not NaN
        if not kept.all():
            block = block[kept]
        if not len(block):
            return
        if self._ints is None:
            self._learn_type(values[first])
        pos, cap, done = self._pos, self._cap, 0
        while done < len(block):
            n = min(cap - pos, len(block) - done)
            self._buf[pos : pos + n] = block[done : done + n]
            pos, done = pos + n, done + n
            if pos == cap:
                pos = self._compact()
        self._pos = pos

    def _learn_type(self, value: Any) -> None:
        ints = isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)
        self._ints = self._spec["ints"] = ints

    def _compact(self) -> int:
        window, cap = self._window, self._cap
        self._buf[:window] = self._buf[cap - window :]
        self._mark -= cap - window
        return window

    def _values(self) -> Floats:
        pos = self._pos
        return self._buf[max(0, pos - self._window) : pos]

    def _peek(self) -> Any:
        values = self._values()
        reduce = self._spec["reduce"]
        if not len(values):
            return 0 if reduce == "sum" else float("nan")
        if reduce == "mean":
            return float(np.add.reduce(values)) / len(values)
        if reduce == "sum":
            result = float(np.add.reduce(values))
        elif reduce == "min":
            result = float(np.minimum.reduce(values))
        else:
            result = float(np.maximum.reduce(values))
        return int(result) if self._ints else result

    def _export(self) -> Merged:
        pos = self._pos
        new = self._new(pos)
        if not new:
            payload: Merged = EMPTY
        elif new <= _LIST_UNTIL:  # a short list is cheaper to make, and to merge, than an array
            payload = self._buf[pos - new : pos].tolist()
        else:
            payload = self._buf[pos - new : pos].copy()
        if self._clear:
            self._pos = self._mark = 0
        else:
            self._mark = pos
        return payload

    def _new(self, pos: int) -> int:
        # Values logged since the last reduce(), at most the window (and what is held).
        new = pos - self._mark
        if new > pos:
            new = pos
        return new if new < self._window else self._window

    def _merge(self, payloads: Sequence[Any], specs: Sequence[Mapping[str, Any]]) -> None:
        if self._ints is None:
            self._adopt_type(specs)
        self._extend(merge_parallel(self._spec["reduce"], payloads, self._window))

    def _adopt_type(self, specs: Sequence[Mapping[str, Any]]) -> None:
        known = [spec["ints"] for spec in specs if spec.get("ints") is not None]
        if known:
            self._ints = self._spec["ints"] = all(known)

    def _extend(self, values: Merged) -> None:
        """Append ``values`` (oldest first) as if each had been pushed."""
        count, window = len(values), self._window
        if not count:
            return
        new = self._pos - self._mark + count
        if count >= window:
            self._buf[:window] = values[count - window :]
            pos = window
        else:
            pos = self._pos
            if pos + count > self._cap:
                keep = min(pos, window - count)
                self._buf[:keep] = self._buf[pos - keep : pos]
                pos = keep
            self._buf[pos : pos + count] = values
            pos += count
        self._pos = pos
        self._mark = pos - new

    def _set(self, value: Any) -> None:
        # The window becomes [value], new since the last reduce(); a NaN empties it. The
        # buffer is written first, so that a value it cannot hold changes nothing.
        if value == value:
            self._buf[0] = value
            if self._ints is None:
                self._learn_type(value)
            self._pos = 1
        else:
            self._pos = 0
        self._mark = 0

    def _dump(self) -> dict[str, Any]:
        return {"values": self._values().copy(), "new": self._new(self._pos)}

    def _load(self, state: Mapping[str, Any]) -> None:
        values = _floats(state["values"])[-self._window :]
        self._buf[: len(values)] = values
        self._pos = len(values)
        self._mark = self._pos - int(state["new"])

    def __len__(self) -> int:
        return min(self._pos, self._window)


class _PercentileWindowStats(_WindowStats):
    """reduce="percentiles" with a window: exact percentiles of the last ``window`` values."""

    __slots__ = ()
    _kinds: ClassVar[tuple[str, ...]] = ("percentiles[window]",)

    def _peek(self) -> dict[float, float | None]:
        return percentiles(self._values(), self._spec["percentiles"])

    def _merge(self, payloads: Sequence[Any], specs: Sequence[Mapping[str, Any]]) -> None:
        # Percentiles need the raw values: concatenate them, runner after runner.
        arrays = [payload for payload in payloads if len(payload)]
        if arrays:
            self._extend(np.concatenate(arrays)[-self._window :])


class _SeriesStats(Stats):
    """reduce="item_series" (or None) without a window: every item since the last reduce()."""

    __slots__ = ("_items",)
    _kinds: ClassVar[tuple[str, ...]] = ("item_series",)

    def _setup(self) -> None:
        self._items: list[Any] = []

    def push(self, value: Any) -> None:
        self._items.append(value)

    def _peek(self) -> Any:
        return plain_items(self._items)

    def _set(self, value: Any) -> None:
        self._items = [value]

    def _export(self) -> list[Any]:
        items, self._items = self._items, []  # without a window, always cleared
        return items

    def _merge(self, payloads: Sequence[Any], specs: Sequence[Mapping[str, Any]]) -> None:
        for payload in payloads:
            self._items.extend(payload)

    def _dump(self) -> dict[str, Any]:
        return {"items": list(self._items)}

    def _load(self, state: Mapping[str, Any]) -> None:
        self._items = list(state["items"])

    def __len__(self) -> int:
        return len(self._items)


class _SeriesWindowStats(Stats):
    """reduce="item_series" (or None) with a window: the last ``window`` items."""

    __slots__ = ("_clear", "_count", "_items", "_mark")
    _kinds: ClassVar[tuple[str, ...]] = ("item_series[window]",)

    def _setup(self) -> None:
        self._items: deque[Any] = deque(maxlen=self._spec["window"])
        self._count = 0  # items ever appended; _mark is its value at the last reduce()
        self._mark = 0
        self._clear: bool = self._spec["clear_on_reduce"]

    def push(self, value: Any) -> None:
        self._items.append(value)
        self._count += 1

    def _peek(self) -> Any:
        return plain_items(self._items)

    def _set(self, value: Any) -> None:
        self._items.clear()
        self._mark = self._count  # only the set value is new since the last reduce()
        self.push(value)

    def _new(self) -> int:
        return min(self._count - self._mark, len(self._items))

    def _export(self) -> list[Any]:
        items = self._items
        payload = list(islice(items, len(items) - self._new(), None))
        if self._clear:
            items.clear()
        self._mark = self._count
        return payload

    def _merge(self, payloads: Sequence[Any], specs: Sequence[Mapping[str, Any]]) -> None:
        for payload in payloads:
            self._items.extend(payload)
            self._count += len(payload)

    def _dump(self) -> dict[str, Any]:
        return {"items": list(self._items), "new": self._new()}

    def _load(self, state: Mapping[str, Any]) -> None:
        self._items.clear()
        self._items.extend(state["items"])
        self._count = len(self._items)
        self._mark = self._count - int(state["new"])

    def __len__(self) -> int:
        return len(self._items)


def percentiles(values: Floats, which: Sequence[float]) -> dict[float, float | None]:
    """Return the exact percentiles (linear interpolation, as numpy and RLlib) of ``values``."""
    if not len(values):
        return dict.fromkeys(which)
    found = np.percentile(values, which)
    return {p: float(v) for p, v in zip(which, found, strict=True)}


def _floats(values: Any) -> Floats:
    if type(values) is np.ndarray and values.dtype == np.float64:
        return values
    return np.asarray(values, dtype=np.float64)
