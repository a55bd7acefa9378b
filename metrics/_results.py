"""Assemble the nested results dict of a training iteration from a logger."""

from __future__ import annotations

from typing import Any

from ._keys import Key, as_path
from ._logger import MetricsLogger

__all__ = ("results",)


def results(logger: MetricsLogger, key: Key | None = None) -> dict[str, Any]:
    """Return the logger's tree (or the subtree under ``key``) as a nested results dict.

    Leaves are the keys' peeks as plain Python data (float, int, list, dict, None: never a
    numpy scalar), nested by key: ``results(logger)["env_runners"]["episode_return_mean"]``.
    A key with a throughput also gets a sibling ``<name>_throughput`` (units per second),
    as RLlib reports them. Nothing is reduced or cleared: call ``logger.reduce()`` after
    building the results to close the iteration.
    """
    prefix = () if key is None else as_path(key)
    tree: dict[str, Any] = {}
    depth = len(prefix)
    for path, stats in logger.items():
        if path[:depth] != prefix:
            continue
        if len(path) == depth:
            raise ValueError(f"{key!r} is a single metric, not a subtree; use peek() for it")
        node = tree
        for part in path[depth:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = stats.peek()
        if stats.settings["with_throughput"]:
            node.setdefault(f"{path[-1]}_throughput", stats.throughput)
    return tree
