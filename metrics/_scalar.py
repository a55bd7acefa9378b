"""The running kinds: EMA, min/max and sums without a window, and the latest item.

Each keeps one running value, so memory is constant. NaN is the only value unequal to
itself; ``value == value`` is how the numeric kinds drop NaNs without a function call.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from time import perf_counter
from typing import Any, ClassVar

from ._plain import plain, plain_items
from ._stats import Stats

__all__ = ()

_NAN = math.nan
_UNSET: Any = object()  # an "item" Stats before its first value (None is a valid item)


# Payloads and states say "no value" with None, not NaN: JSON has no NaN (msgspec writes
# null), and None reads the same in every format.
def _none_if_nan(value: Any) -> Any:
    return None if value != value else value


def _nan_if_none(value: Any) -> Any:
    return _NAN if value is None else value


def _number(state: Mapping[str, Any], field: str, *, or_none: bool = False) -> Any:
    """Return ``state[field]`` if it is a number (or None if allowed); ValueError if not.

    States come from files: a string loaded here would only fail at the next log or reduce.
    """
    value = state[field]
    if (value is None and or_none) or (
        isinstance(value, numbers.Real) and not isinstance(value, bool)
    ):
        return value
    allowed = "a number or None" if or_none else "a number"
    raise ValueError(f"state field {field!r} must be {allowed}, got {value!r}")


class _OneValueStats(Stats):
    """Shared parts of the kinds that hold one running number (NaN while empty)."""

    __slots__ = ("_value",)

    def _dump(self) -> dict[str, Any]:
        return {"value": _none_if_nan(plain(self._value))}

    def _load(self, state: Mapping[str, Any]) -> None:
        self._value = _nan_if_none(_number(state, "value", or_none=True))

    def _set(self, value: Any) -> None:
        self._value = value if value == value else _NAN  # a NaN empties it

    def __len__(self) -> int:
        return int(self._value == self._value)


class _EmaStats(_OneValueStats):
    """reduce="ema" (or "mean" without a window): ``v = (1 - c) * v + c * value``."""

    __slots__ = ("_clear", "_coeff", "_keep")
    _kinds: ClassVar[tuple[str, ...]] = ("ema",)

    def _setup(self) -> None:
        self._value: Any = _NAN
        self._coeff: float = self._spec["ema_coeff"]
        self._keep = 1.0 - self._coeff
        self._clear: bool = self._spec["clear_on_reduce"]

    def push(self, value: Any) -> None:
        current = self._value
        if current == current:
            if value == value:
                self._value = self._keep * current + self._coeff * value
        elif value == value:
            self._value = value

    def _peek(self) -> float:
        return float(self._value)

    def _export(self) -> Any:
        value = self._value
        if self._clear:
            self._value = _NAN
        return _none_if_nan(value)

    def _merge(self, payloads: Sequence[Any], specs: Sequence[Mapping[str, Any]]) -> None:
        # Parallel EMAs average (RLlib does the same): each runner's EMA already smooths
        # over time. With nothing valid incoming, the current value stays.
        values = [float(v) for v in payloads if v is not None and v == v]
        if values:
            self._value = math.fsum(values) / len(values)


class _ExtremeStats(_OneValueStats):
    """Shared parts of the running (unwindowed) min and max."""

    __slots__ = ("_clear",)

    def _setup(self) -> None:
        self._value: Any = _NAN
        self._clear: bool = self._spec["clear_on_reduce"]

    def _better(self, value: Any, current: Any) -> bool:
        raise NotImplementedError

    def _peek(self) -> Any:
        return plain(self._value)

    def _export(self) -> Any:
        value = self._value
        if self._clear:
            self._value = _NAN
        return _none_if_nan(value)

    def _merge(self, payloads: Sequence[Any], specs: Sequence[Mapping[str, Any]]) -> None:
        for value in payloads:
            if value is None or value != value:
                continue
            if self._value != self._value or self._better(value, self._value):
                self._value = value


class _MinStats(_ExtremeStats):
    """reduce="min" without a window: the smallest value since creation (or last clear)."""

    __slots__ = ()
    _kinds: ClassVar[tuple[str, ...]] = ("min",)

    def push(self, value: Any) -> None:
        current = self._value
        if value < current or current != current:  # current is NaN only while empty
            if value == value:
                self._value = value

    def _better(self, value: Any, current: Any) -> bool:
        return bool(value < current)


class _MaxStats(_ExtremeStats):
    """reduce="max" without a window: the largest value since creation (or last clear)."""

    __slots__ = ()
    _kinds: ClassVar[tuple[str, ...]] = ("max",)

    def push(self, value: Any) -> None:
        current = self._value
        if value > current or current != current:
            if value == value:
                self._value = value

    def _better(self, value: Any, current: Any) -> bool:
        return bool(value > current)


class _EmptyTotal:
    """The total of a sum that holds nothing: it shows as 0, and adding to it gives a number.

    A sum is empty (``len`` 0, like RLlib's empty values list) before its first value and
    after a clearing reduce(). Marking that with this object instead of a flag leaves push()
    as it was: ``total += value`` replaces the marker with ``0 + value``, exactly what
    adding to the int 0 gave. A flag written on every push measured about 4 ns (5% of it).
    """

    __slots__ = ()

    def __add__(self, other: Any) -> Any:
        return 0 + other

    def __repr__(self) -> str:
        return "<empty total>"


_EMPTY_TOTAL: Any = _EmptyTotal()


class _SumStats(Stats):
    """reduce="sum" without a window, or "lifetime_sum" (a sum never cleared).

    ``_total`` is what peek shows (``_EMPTY_TOTAL`` while the sum holds nothing); ``_delta``
    is what was added since the last reduce(), which is all a snapshot carries, so that
    merging the same runner's snapshots every iteration never counts a value twice. An empty
    sum hands over None: like RLlib, which skips empty Stats in a merge, the aggregating
    side then stays empty too.
    """

    __slots__ = ("_clear", "_delta", "_total")
    _kinds: ClassVar[tuple[str, ...]] = ("sum", "lifetime_sum")

    def _setup(self) -> None:
        self._total: Any = _EMPTY_TOTAL
        self._delta: Any = 0
        self._clear: bool = self._spec["clear_on_reduce"]

    def push(self, value: Any) -> None:
        if value == value:
            self._total += value
            self._delta += value

    def _peek(self) -> Any:
        total = self._total
        return 0 if total is _EMPTY_TOTAL else plain(total)

    def _export(self) -> Any:
        if self._total is _EMPTY_TOTAL:
            return None  # nothing logged since creation or the last clearing reduce()
        delta = self._delta  # payloads may hold numpy scalars: events.codec encodes them
        self._delta = 0
        if self._clear:
            self._total = _EMPTY_TOTAL
        return delta

    def _merge(self, payloads: Sequence[Any], specs: Sequence[Mapping[str, Any]]) -> None:
        added = 0
        held = False
        for value in payloads:
            if value is not None and value == value:
                added += value
                held = True
        if held:
            self.push(added)

    def _set(self, value: Any) -> None:
        # The total jumps to ``value``; the jump is what a snapshot hands over, so that the
        # aggregating side follows (RLlib 2.40 merged a set lifetime sum the same way: the
        # new value minus the previously reduced one). A NaN empties the sum. The
        # throughput, if any, is left alone: setting a total is not progress.
        total = self._total
        before = 0 if total is _EMPTY_TOTAL else total
        if value == value:
            self._total = value
            self._delta += value - before
        else:
            self._total = _EMPTY_TOTAL
            self._delta -= before

    def _dump(self) -> dict[str, Any]:
        total = self._total
        return {
            "total": None if total is _EMPTY_TOTAL else plain(total),
            "delta": plain(self._delta),
        }

    def _load(self, state: Mapping[str, Any]) -> None:
        total = _number(state, "total", or_none=True)
        self._total = _EMPTY_TOTAL if total is None else total
        self._delta = _number(state, "delta")

    def __len__(self) -> int:
        return int(self._total is not _EMPTY_TOTAL)


class _ThroughputSumStats(_SumStats):
    """A sum that also estimates units per second.

    Each push (or merge) of ``value`` after ``dt`` seconds since the previous one (or since
    the clock started) yields a rate ``value / dt``, smoothed with an EMA of coefficient
    ``throughput_ema_coeff`` (RLlib's scheme). The first push (or merge) only starts the
    clock, so the throughput is NaN until the second: a key's rate never covers the time
    before it was first logged, and an aggregating logger's first merge of a key gives NaN,
    as in RLlib. ``from_state`` restarts the clock at the restore (RLlib does the same).
    """

    __slots__ = ("_last", "_rate", "_tcoeff", "_tkeep")
    _kinds: ClassVar[tuple[str, ...]] = ("sum+throughput", "lifetime_sum+throughput")

    def _setup(self) -> None:
        super()._setup()
        self._rate = _NAN
        self._last = _NAN  # now - NaN is NaN, never > 0: the first push only starts the clock
        self._tcoeff: float = self._spec["throughput_ema_coeff"]
        self._tkeep = 1.0 - self._tcoeff

    def push(self, value: Any) -> None:
        if value == value:
            self._total += value
            self._delta += value
            now = perf_counter()
            elapsed = now - self._last
            if elapsed > 0:
                rate = value / elapsed
                current = self._rate
                self._rate = (
                    rate if current != current else self._tkeep * current + self._tcoeff * rate
                )
            self._last = now

    def _start_clock(self, now: float) -> None:
        self._last = now

    @property
    def throughput(self) -> float:
        return float(self._rate)

    def _dump(self) -> dict[str, Any]:
        return {**super()._dump(), "throughput": _none_if_nan(self._rate)}

    def _load(self, state: Mapping[str, Any]) -> None:
        super()._load(state)
        self._rate = _nan_if_none(_number(state, "throughput", or_none=True))


class _ItemStats(Stats):
    """reduce="item": the latest value logged (any object; not reduced, NaN kept)."""

    __slots__ = ("_clear", "_value")
    _kinds: ClassVar[tuple[str, ...]] = ("item",)

    def _setup(self) -> None:
        self._value: Any = _UNSET
        self._clear: bool = self._spec["clear_on_reduce"]

    def push(self, value: Any) -> None:
        self._value = value

    def _peek(self) -> Any:
        return None if self._value is _UNSET else plain_items(self._value)

    def _set(self, value: Any) -> None:
        self._value = value

    def _export(self) -> list[Any]:
        payload = self._held()
        if self._clear:
            self._value = _UNSET
        return payload

    def _merge(self, payloads: Sequence[Any], specs: Sequence[Mapping[str, Any]]) -> None:
        for payload in payloads:
            if payload:
                self._value = payload[-1]

    def _dump(self) -> dict[str, Any]:
        return {"value": self._held()}

    def _held(self) -> list[Any]:
        return [] if self._value is _UNSET else [self._value]

    def _load(self, state: Mapping[str, Any]) -> None:
        items = state["value"]
        if not isinstance(items, list):
            raise ValueError(f"state field 'value' must be a list, got {items!r}")
        self._value = items[-1] if items else _UNSET

    def __len__(self) -> int:
        return int(self._value is not _UNSET)
