"""Check that saved state has the structure of a live object's state, before loading it.

A checkpoint is loaded into objects that already exist (a learner's networks, an
optimizer's moments): its state must have the same shape as what they would save now. So
the check needs no schema per algorithm: the live ``get_state()`` is the template. Dicts
must have the same keys, arrays the same shape and dtype, numbers, strings and bytes the
same kind; a None in the template accepts anything (optional state), and lists are only
checked to be lists (their length may vary, as a history's does).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ("check_structure",)


def check_structure(value: object, template: object, where: str) -> None:
    """Raise ValueError naming the first place ``value`` differs in structure from ``template``.

    ``where`` names ``value`` in messages (``"learner"`` gives ``learner['module']['w0']``).
    """
    if template is None:
        return
    if isinstance(template, Mapping):
        _check_mapping(value, template, where)
    elif isinstance(template, np.ndarray):
        _check_array(value, template, where)
    elif isinstance(template, list | tuple):
        if not isinstance(value, list | tuple):
            raise ValueError(f"{where} is {_kind(value)}, expected a list")
    elif not isinstance(value, _same_kind(template)) or isinstance(value, bool | np.bool_) != (
        isinstance(template, bool | np.bool_)
    ):
        raise ValueError(f"{where} is {_kind(value)}, expected {_kind(template)}")


def _check_mapping(value: object, template: Mapping[Any, Any], where: str) -> None:
    if not isinstance(value, Mapping):
        raise ValueError(f"{where} is {_kind(value)}, expected a dict")
    missing = [key for key in template if key not in value]
    unknown = [key for key in value if key not in template]
    if missing or unknown:
        parts = [f"lacks keys {missing!r}"] if missing else []
        parts += [f"has unknown keys {unknown!r}"] if unknown else []
        raise ValueError(f"{where} {' and '.join(parts)}; this Algorithm's has {list(template)!r}")
    for key, expected in template.items():
        check_structure(value[key], expected, f"{where}[{key!r}]")


def _check_array(value: object, template: np.ndarray[Any, Any], where: str) -> None:
    if not isinstance(value, np.ndarray):
        raise ValueError(f"{where} is {_kind(value)}, expected a {template.dtype} array")
    if value.shape != template.shape:
        raise ValueError(
            f"{where} has shape {value.shape}, this Algorithm's has shape {template.shape}"
        )
    if value.dtype != template.dtype:
        raise ValueError(
            f"{where} has dtype {value.dtype}, this Algorithm's has dtype {template.dtype}"
        )


def _same_kind(template: object) -> type | tuple[type, ...]:
    """Return the types a value may have where the template holds ``template``."""
    if isinstance(template, bool | np.bool_):
        return (bool, np.bool_)
    if isinstance(template, numbers.Integral):
        return numbers.Integral
    if isinstance(template, numbers.Real):
        return numbers.Real  # a float saved as 1.0 may come back as the int 1: both load
    return type(template) if isinstance(template, str | bytes) else object


def _kind(value: object) -> str:
    if isinstance(value, np.ndarray):
        return f"a {value.dtype} array of shape {value.shape}"
    return f"{type(value).__name__} {value!r}" if _is_short(value) else type(value).__name__


def _is_short(value: object) -> bool:
    return isinstance(value, bool | numbers.Number | str | bytes | None) and len(repr(value)) < 60
