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
    "Check",
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
            raise ConfigError(f"{name} must be {self.allows}, got {value!r}")

    def __repr__(self) -> str:
        return f"Check({self.allows!r})"


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
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def int_check(low: int) -> Check:
    """An int (not a bool) >= ``low``."""
    return Check(f"an int >= {low}", lambda v: _is_int(v) and v >= low)


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
