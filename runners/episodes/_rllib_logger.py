"""A replay's stand-in for RLlib 2.60's ``MetricsLogger``: its API, its Stats, its cycle.

Handlers replaying an RLlib recording log into these, one per EnvRunner and one for the
Algorithm (the root), so that what they log reduces and merges as RLlib 2.60's loggers do
(``ray/rllib/utils/metrics/metrics_logger.py``; the Stats in ``_rllib_stats``):

- ``log_value(key, value, reduce=None, window=None, ema_coeff=None, percentiles=None,
  clear_on_reduce=...)``: no ``reduce`` is an EMA (coefficient 0.01), or a mean with a
  window; ``reduce="sum"`` with ``clear_on_reduce=False`` is a lifetime sum; any other
  ``clear_on_reduce`` is ignored, as RLlib 2.60 (which deprecated it) ignores it.
- ``log_dict`` (default ``reduce="mean"``), ``log_time`` (default an EMA), ``peek``.
- ``handover()`` is an EnvRunner's ``get_metrics()``, ``aggregate()`` the Algorithm's merge
  of them, ``compile()`` its end-of-iteration reduce, giving the result dict's values.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from time import perf_counter
from typing import Any

from ._rllib_stats import RLlibStats, make_stats

__all__ = ("RLlibMetricsLogger",)

Path = tuple[str, ...]

_UNSET: Any = object()  # RLlib's DEPRECATED_VALUE: "not given"


def _path(key: str | tuple[str, ...] | list[str]) -> Path:
    return (key,) if isinstance(key, str) else tuple(key)


class RLlibMetricsLogger:
    """Log values under (nested) keys with RLlib 2.60's semantics (a replay's stand-in)."""

    def __init__(self, *, root: bool = False) -> None:
        self.root = root
        """Whether this is the Algorithm's logger (its lifetime sums are never reset)."""
        self.stats: dict[Path, RLlibStats] = {}

    # --- logging (RLlib's API) ----------------------------------------------------------------

    def log_value(
        self,
        key: str | tuple[str, ...],
        value: Any,
        *,
        reduce: str | None = None,
        window: float | None = None,
        ema_coeff: float | None = None,
        percentiles: Any = None,
        clear_on_reduce: Any = _UNSET,
        with_throughput: bool | None = None,
        **kwargs: Any,
    ) -> None:
        """Log ``value`` under ``key``; settings count at a key's first log only."""
        path = _path(key)
        stats = self.stats.get(path)
        if stats is None:
            if reduce is None:
                reduce = "mean" if window is not None else "ema"
            if reduce == "sum" and clear_on_reduce is False:
                reduce = "lifetime_sum"
            stats = make_stats(reduce, window, ema_coeff, percentiles, root=self.root)
            for depth in range(1, len(path)):
                if path[:depth] in self.stats:
                    raise ValueError(f"cannot log under {path!r}: {path[:depth]!r} is a metric")
            self.stats[path] = stats
        if not stats.leaf:
            raise ValueError(
                f"cannot log into {path!r}: it holds what runners' metrics were merged into "
                "(RLlib: aggregation keys must be separate from direct logging keys)"
            )
        stats.push(value)

    def log_dict(
        self,
        value_dict: Mapping[str, Any],
        *,
        key: str | tuple[str, ...] | None = None,
        reduce: str | None = "mean",
        window: float | None = None,
        ema_coeff: float | None = None,
        percentiles: Any = None,
        clear_on_reduce: Any = _UNSET,
        **kwargs: Any,
    ) -> None:
        """Log every leaf of a nested dict, under ``key`` + its path."""
        prefix = () if key is None else _path(key)
        for path, value in _leaves(value_dict, prefix):
            self.log_value(
                path,
                value,
                reduce=reduce,
                window=window,
                ema_coeff=ema_coeff,
                percentiles=percentiles,
                clear_on_reduce=clear_on_reduce,
            )

    @contextmanager
    def log_time(
        self,
        key: str | tuple[str, ...],
        *,
        reduce: str = "ema",
        window: float | None = None,
        ema_coeff: float | None = None,
        percentiles: Any = None,
        clear_on_reduce: Any = _UNSET,
        **kwargs: Any,
    ) -> Iterator[None]:
        """Log the seconds the ``with`` block takes under ``key``."""
        start = perf_counter()
        try:
            yield
        finally:
            self.log_value(
                key,
                perf_counter() - start,
                reduce=reduce,
                window=window,
                ema_coeff=ema_coeff,
                percentiles=percentiles,
                clear_on_reduce=clear_on_reduce,
            )

    # --- reading ------------------------------------------------------------------------------

    def peek(
        self,
        key: str | tuple[str, ...] | None = None,
        default: Any = None,
        compile: bool = True,
        throughput: bool = False,
        latest_merged_only: bool = False,
    ) -> Any:
        """Return the reduced value under ``key`` (a nested dict for a parent key), changing
        nothing; a missing key gives ``default``, or KeyError without one (RLlib's rule)."""
        if throughput:
            raise ValueError("a replay has no throughputs: they are rates of wall-clock time")
        prefix = () if key is None else _path(key)
        read = _latest if latest_merged_only else _peek
        found = self.stats.get(prefix)
        if found is not None:
            value = read(found)
            return value if compile else [value]
        tree = self._tree(prefix, read)
        if tree or key is None:
            return tree
        if default is None:
            raise KeyError(key)
        return default

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str | tuple):
            return False
        path = _path(key)
        return any(p[: len(path)] == path for p in self.stats)

    # --- RLlib's cycle --------------------------------------------------------------------------

    def handover(self) -> dict[Path, RLlibStats]:
        """Return what every key hands the Algorithm, emptying them (``get_metrics()``)."""
        return {path: stats.handover() for path, stats in self.stats.items()}

    def aggregate(self, handovers: Iterable[Mapping[Path, RLlibStats]], *, key: Path = ()) -> None:
        """Merge the handovers of parallel components under ``key`` (RLlib's ``aggregate``)."""
        incoming: dict[Path, list[RLlibStats]] = {}
        for handover in handovers:
            for path, stats in handover.items():
                incoming.setdefault(key + path, []).append(stats)
        for path, parts in incoming.items():
            own = self.stats.get(path)
            if own is None:
                own = self.stats[path] = parts[0].fresh(root=self.root, leaf=False)
            elif own.leaf:
                raise ValueError(
                    f"cannot merge into {path!r}: it was logged into directly (RLlib: "
                    "aggregation keys must be separate from direct logging keys)"
                )
            own.merge(parts)

    def compile(self) -> dict[str, Any]:
        """Reduce every key and return the nested dict (``compile()``: a list of one is its
        item), closing the period."""
        return _nest(((path, _unlisted(stats.compile())) for path, stats in self.stats.items()), ())

    def reset(self) -> None:
        """Forget every key."""
        self.stats.clear()

    def _tree(self, prefix: Path, read: Any) -> dict[str, Any]:
        depth = len(prefix)
        chosen = (
            (p, read(s)) for p, s in self.stats.items() if p[:depth] == prefix and p != prefix
        )
        return _nest(chosen, prefix)

    def __repr__(self) -> str:
        role = "root" if self.root else "runner"
        return f"<RLlibMetricsLogger ({role}) with {len(self.stats)} keys>"


def _peek(stats: RLlibStats) -> Any:
    return stats.peek()


def _latest(stats: RLlibStats) -> Any:
    return stats.latest() if not stats.leaf else stats.peek()


def _unlisted(value: Any) -> Any:
    return value[0] if isinstance(value, list) and len(value) == 1 else value


def _leaves(tree: Mapping[str, Any], prefix: Path) -> Iterator[tuple[Path, Any]]:
    for name, value in tree.items():
        if isinstance(value, Mapping):
            yield from _leaves(value, (*prefix, name))
        else:
            yield (*prefix, name), value


def _nest(items: Iterable[tuple[Path, Any]], prefix: Path) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    depth = len(prefix)
    for path, value in items:
        node = tree
        for part in path[depth:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
    return tree
