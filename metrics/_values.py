"""Reduced values out of snapshots and Stats trees: RLlib's ``peek_results`` and ``compile``.

RLlib's ``MetricsLogger.reduce()`` returned trees with Stats at the leaves (2.40) or lists of
values (later, ``compile=False``); ``peek_results(results, compile=True)`` turned either into
plain values. hookbus's ``reduce()`` returns a snapshot (three parallel lists, see
``_snapshot.py``), so ``peek_results`` takes snapshots too: each key's payload is folded into
a fresh Stats of its settings and peeked, which gives the value of what the snapshot carries
(what was new since the previous ``reduce()``: a window's new values, a sum's increment).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._keys import nest
from ._snapshot import checked, columns
from ._spec import checked_spec
from ._stats import Stats

__all__ = ("is_snapshot", "listed", "peek_results", "snapshot_values")

_SNAPSHOT_FIELDS = ("version", "keys", "specs", "data")


def listed(stats: Stats) -> Any:
    """Return ``stats``' value uncompiled, as RLlib's ``compile=False``: a list of values.

    A list of items is already one; any other value becomes a list of that one value.
    """
    value = stats.peek()
    return value if stats._spec["reduce"] == "item_series" else [value]


def is_snapshot(results: Any) -> bool:
    """Whether ``results`` looks like a ``MetricsLogger.reduce()`` snapshot."""
    return isinstance(results, Mapping) and all(field in results for field in _SNAPSHOT_FIELDS)


def snapshot_values(snapshot: Mapping[str, Any], compile: bool = True) -> dict[str, Any]:
    """Return the nested dict of the values a snapshot carries (it is left unchanged)."""
    leaves: list[tuple[tuple[str, ...], Stats]] = []
    for path, specs, payloads in columns([checked(snapshot)]):
        stats = Stats._build(checked_spec(specs[0]))
        stats._merge_checked(payloads, specs)
        leaves.append((path, stats))
    return nest(leaves, (), _peek if compile else listed)


def peek_results(results: Any, compile: bool = True) -> Any:
    """Return ``results`` with every Stats peeked and every snapshot turned into values.

    Dicts, lists and tuples are walked (a tuple comes back as a tuple); other leaves come
    back as they are, as RLlib's ``tree.map_structure`` leaves them.
    """
    if isinstance(results, Stats):
        return results.peek() if compile else listed(results)
    if is_snapshot(results):
        return snapshot_values(results, compile)
    if isinstance(results, Mapping):
        return {key: peek_results(value, compile) for key, value in results.items()}
    if isinstance(results, list):
        return [peek_results(item, compile) for item in results]
    if isinstance(results, tuple):
        return tuple(peek_results(item, compile) for item in results)
    return results


def _peek(stats: Stats) -> Any:
    return stats.peek()
