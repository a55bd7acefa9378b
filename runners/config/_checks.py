"""Checks of setting values: small objects that a setting's declaration names.

Each check is called as ``check(name, value)`` and raises ConfigError naming the setting,
what it allows and the value it got; ``allows`` says the same for the settings table in
docs/settings.md. ``int_at_least`` and friends also serve code outside the config (a
learner checking its own arguments).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

from hookbus.kernel import ConfigError

__all__ = (
    "INT_LIMIT",
    "Check",
    "IntRange",
    "Rule",
    "boolean",
    "finite",
    "finite_above",
    "finite_at_least",
    "int_at_least",
    "int_check",
    "is_callable",
    "number_above",
    "number_at_least",
    "number_in",
    "one_of",
    "optional",
    "show",
)


class Check:
    """A named rule for one setting's value: ``check(name, value)`` raises if it fails."""

    __slots__ = ("allows", "test")

    def __init__(self, allows: str, test: Callable[[Any], bool]) -> None:
        self.allows = allows
        """What the setting takes, as the error message and the docs table say it."""
        self.test = test

    def __call__(self, name: str, value: object) -> None:
        if not self.test(value):
            raise ConfigError(f"{name} must be {self.allows}, got {show(value)}")

    def __repr__(self) -> str:
        return f"Check({self.allows!r})"


INT_LIMIT = 2**31 - 1
"""The largest value of any int setting (a bound of its own may be lower): counts and sizes
beyond it are mistakes, and an unbounded int (``10**4000``) would fail deep in numpy or the
checkpoint codec instead of here."""


class IntRange(Check):
    """An int (not a bool) in [low, high]; ``high`` None: at most ``INT_LIMIT``, unsaid."""

    __slots__ = ("high", "low")

    def __init__(self, low: int, high: int | None = None) -> None:
        allows = f"an int >= {low}" if high is None else f"an int in [{low}, {high}]"
        top = INT_LIMIT if high is None else high
        super().__init__(allows, lambda v: _is_int(v) and low <= v <= top)
        self.low, self.high = low, high

    def __call__(self, name: str, value: object) -> None:
        if self.test(value):
            return
        if self.high is None and _is_int(value) and int(value) > INT_LIMIT:  # type: ignore[call-overload]
            raise ConfigError(
                f"{name} must be {self.allows} and at most 2**31 - 1 (the bound of every int "
                f"setting), got {show(value)}"
            )
        super().__call__(name, value)


def show(value: object) -> str:
    """Return ``repr(value)``, short for a huge int (whose repr may not even be allowed)."""
    if isinstance(value, int) and value.bit_length() > 64:
        bits = value.bit_length()
        return f"an int of {bits} bits (about {'-' if value < 0 else ''}10**{int(bits * 0.30103)})"
    text = repr(value)
    return text if len(text) <= 200 else f"{text[:200]}... ({type(value).__name__})"


class Rule(Check):
    """A check that raises its own message: ``fn(name, value)``; ``allows`` is for the docs."""

    __slots__ = ("fn",)

    def __init__(self, allows: str, fn: Callable[[str, Any], None]) -> None:
        super().__init__(allows, lambda value: True)
        self.fn = fn

    def __call__(self, name: str, value: object) -> None:
        self.fn(name, value)


# numbers.Real and Integral take numpy's scalars too (a learner's settings may be numpy).
def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    # An int too large for a float (10**4000) is no number a setting can use: the learner
    # would fail converting it (OverflowError), and math.isfinite() itself raises on it.
    if isinstance(value, int) and not isinstance(value, bool):
        return value.bit_length() <= 1000
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def int_check(low: int, high: int | None = None) -> Check:
    """An int (not a bool) >= ``low`` and <= ``high`` (by default ``INT_LIMIT``)."""
    return IntRange(low, high)


def number_above(low: float) -> Check:
    """A number > ``low``."""
    return Check(f"a number > {low}", lambda v: _is_number(v) and v > low)


def number_at_least(low: float) -> Check:
    """A number >= ``low``."""
    return Check(f"a number >= {low}", lambda v: _is_number(v) and v >= low)


def number_in(low: float, high: float, *, open_low: bool = False) -> Check:
    """A number in [low, high] (or (low, high] with ``open_low``)."""
    bracket = "(" if open_low else "["
    return Check(
        f"a number in {bracket}{low}, {high}]",
        lambda v: _is_number(v) and (low < v if open_low else low <= v) and v <= high,
    )


def finite_above(low: float) -> Check:
    """A finite number > ``low``."""
    return Check(f"a finite number > {low}", lambda v: _is_number(v) and low < v < math.inf)


def finite_at_least(low: float) -> Check:
    """A finite number >= ``low``."""
    return Check(f"a finite number >= {low}", lambda v: _is_number(v) and low <= v < math.inf)


finite = Check("a finite number", lambda v: _is_number(v) and math.isfinite(v))
boolean = Check("True or False", lambda v: isinstance(v, bool))
is_callable = Check("callable", callable)


def one_of(*values: object) -> Check:
    """One of ``values``."""
    return Check(f"one of {', '.join(map(repr, values))}", lambda v: v in values)


def optional(check: Check, allows: str | None = None) -> Check:
    """None, or what ``check`` takes; ``allows`` words it otherwise ("None or ...")."""
    return Check(allows or f"None or {check.allows}", lambda v: v is None or check.test(v))


def int_at_least(name: str, value: object, low: int) -> None:
    """Raise ConfigError unless ``value`` is an int >= ``low``."""
    int_check(low)(name, value)
