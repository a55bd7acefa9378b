"""The snapshot format of ``MetricsLogger.reduce()``: checking it, and lining up its columns.

A snapshot is three parallel lists, ``{"version": 1, "keys": [...], "specs": [...], "data":
[...]}``: per key its path, its canonical settings and what is new since the last reduce().
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ._keys import Path, as_path

__all__ = ("SNAPSHOT_VERSION", "check_version", "checked", "columns")

SNAPSHOT_VERSION = 1


def check_version(data: Any) -> None:
    """Raise ValueError unless ``data`` is a dict of this snapshot/state format version."""
    if type(data) is not dict and not isinstance(data, Mapping):
        raise ValueError(f"not a hookbus metrics snapshot or state: {type(data).__name__}")
    if data.get("version") != SNAPSHOT_VERSION:
        raise ValueError(
            f"not a hookbus metrics snapshot or state (version {data.get('version')!r}; "
            f"expected version {SNAPSHOT_VERSION}, from MetricsLogger.reduce() or get_state())"
        )


def checked(snapshot: Mapping[str, Any]) -> Mapping[str, Any]:
    """Return ``snapshot`` if it is well formed; ValueError otherwise."""
    check_version(snapshot)
    try:
        lengths = {len(snapshot[field]) for field in ("keys", "specs", "data")}
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a hookbus metrics snapshot: missing or bad {exc}") from exc
    if len(lengths) > 1:
        raise ValueError("a metrics snapshot's keys, specs and data differ in length")
    return snapshot


_Column = tuple[Path, Sequence[Mapping[str, Any]], Sequence[Any]]


def columns(snapshots: list[Mapping[str, Any]]) -> Iterable[_Column]:
    """Yield ``(path, specs, payloads)`` per key over all snapshots, in first-seen order."""
    if not snapshots:
        return []
    keys = snapshots[0]["keys"]
    # Fast path: runners running the same code list the same keys in the same order.
    if all(s["keys"] is keys or s["keys"] == keys for s in snapshots):
        specs = zip(*(s["specs"] for s in snapshots), strict=True)
        payloads = zip(*(s["data"] for s in snapshots), strict=True)
        return zip(map(_path, keys), specs, payloads, strict=True)
    by_key: dict[Path, tuple[list[Mapping[str, Any]], list[Any]]] = {}
    for s in snapshots:
        for key, spec, payload in zip(s["keys"], s["specs"], s["data"], strict=True):
            specs_of, payloads_of = by_key.setdefault(_path(key), ([], []))
            specs_of.append(spec)
            payloads_of.append(payload)
    return [(path, specs_of, payloads_of) for path, (specs_of, payloads_of) in by_key.items()]


def _path(key: Any) -> Path:
    return key if type(key) is tuple else as_path(key)
