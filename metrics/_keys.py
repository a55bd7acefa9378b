"""Metric keys: a str or a tuple of str (a nested key), and the nested dicts they form."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

__all__ = ("Key", "Path", "as_path", "nest", "walk")

Key = str | tuple[str, ...]
Path = tuple[str, ...]


def as_path(key: Any) -> Path:
    """Return ``key`` as a tuple of str; TypeError for anything else."""
    if isinstance(key, str):
        return (key,)
    if isinstance(key, tuple | list) and key and all(isinstance(part, str) for part in key):
        return tuple(key)
    raise TypeError(f"a metric key is a str or a non-empty tuple of str, not {key!r}")


def nest(
    items: Iterable[tuple[Path, Any]], prefix: Path, value: Callable[[Any], Any]
) -> dict[str, Any]:
    """Build the nested dict of ``value(x)`` for every ``(path, x)`` under ``prefix``."""
    tree: dict[str, Any] = {}
    depth = len(prefix)
    for path, item in items:
        if path[:depth] != prefix:
            continue
        node = tree
        for part in path[depth:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value(item)
    return tree


def walk(tree: Mapping[str, Any], prefix: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Yield ``(path, leaf)`` for every non-dict leaf of a nested dict."""
    for name, item in tree.items():
        path = (*prefix, *as_path(name))
        if isinstance(item, Mapping):
            yield from walk(item, path)
        else:
            yield path, item
