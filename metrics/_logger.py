"""``MetricsLogger``: a tree of Stats, logged into by key, reduced into mergeable snapshots.

Layout: ``_stats`` maps each canonical path (a tuple of str) to its Stats, in creation order;
``_index`` maps every spelling a key was logged under (``"a"``, ``("a",)``, ``("a", "b")``)
to the same Stats, so that ``log_value`` on an existing key is one dict lookup and one
``push``. Settings are read only when a key is created. Not thread-safe: one logger belongs
to one task (RLlib's lock cost up to 10% of learner time; an event loop needs none).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from time import perf_counter
from types import TracebackType
from typing import Any, Literal, overload

import numpy as np

from ._keys import Key, Path, as_path, nest, walk
from ._rllib_names import RLlibNames
from ._snapshot import SNAPSHOT_VERSION, check_version, checked, columns
from ._spec import (
    ITEM_KINDS,
    as_block,
    bad_value,
    check_numbers,
    checked_spec,
    is_number,
    make_spec,
)
from ._stats import Stats
from ._values import listed

__all__ = ("MetricsLogger",)

_NUMPY_BOOL = np.bool_

_MISSING: Any = object()


class MetricsLogger(RLlibNames):
    """Log values under (nested) keys, reduce them, and merge other loggers' snapshots."""

    # __weakref__: callbacks that keep something per logger (the built-in EnvRunner
    # metrics) hold it weakly, so a discarded runner's logger is freed with it.
    __slots__ = ("__weakref__", "_index", "_layout", "_parents", "_stats")

    def __init__(self) -> None:
        self._stats: dict[Path, Stats] = {}
        self._index: dict[Any, Stats] = {}
        self._parents: set[Path] = set()  # every proper prefix of a path in _stats
        self._layout: tuple[list[Path], list[dict[str, Any]]] | None = None  # reduce()'s cache

    # --- logging --------------------------------------------------------------------------

    def log_value(
        self,
        key: Key,
        value: Any,
        reduce: str | None = "mean",
        window: float | None = None,
        ema_coeff: float | None = None,
        clear_on_reduce: bool = False,
        *,
        with_throughput: bool = False,
        throughput_ema_coeff: float | None = None,
        percentiles: Sequence[float] | bool | None = None,
    ) -> None:
        """Log ``value`` under ``key`` (a str, or a tuple of str for a nested key).

        The settings apply only to the first log of a key and are ignored afterwards.
        ``reduce`` is one of "mean" (over ``window`` values, else an EMA with ``ema_coeff``,
        default 0.01), "ema", "min", "max", "sum", "lifetime_sum", "item", "item_series",
        "percentiles" or None (a list of items). ``clear_on_reduce`` empties the key at each
        ``reduce()``; ``with_throughput`` (sums) also tracks units per second. A numpy
        bool counts as a Python bool, 0 or 1 (RLlib's self-play example logs one).
        """
        if type(value) is _NUMPY_BOOL:  # numpy's bools add as "or": True + True is True
            value = bool(value)  # (a type check: isinstance costs a fifth of a log_value)
        try:
            stats = self._index[key]
        except (KeyError, TypeError):
            spec = (reduce, window, ema_coeff, clear_on_reduce)
            self._log_first(key, value, spec, with_throughput, throughput_ema_coeff, percentiles)
            return
        try:
            stats.push(value)
        except (TypeError, ValueError) as exc:
            raise bad_value(key, value, stats._spec["reduce"]) from exc

    def log_values(
        self,
        key: Key,
        values: Iterable[Any],
        reduce: str | None = "mean",
        window: float | None = None,
        ema_coeff: float | None = None,
        clear_on_reduce: bool = False,
    ) -> None:
        """Log each of ``values`` under ``key``, in order: what as many ``log_value`` calls
        with these settings do, in one (a window takes a block at a time). hookbus's own.

        All or nothing: a value the key's kind cannot take raises the TypeError
        ``log_value`` raises for it, before any value of the block is logged.
        """
        values = as_block(key, values)
        if not len(values):
            return
        stats = self._find(key)
        kind = reduce if stats is None else stats._spec["reduce"]
        if kind is not None and kind not in ITEM_KINDS:
            check_numbers(key, values, kind)
        if stats is None:
            self.log_value(key, values[0], reduce, window, ema_coeff, clear_on_reduce)
            stats, values = self._stats[as_path(key)], values[1:]
        try:
            stats.push_many(values)
        except (TypeError, ValueError) as exc:  # what check_numbers cannot see coming
            raise bad_value(key, values, stats._spec["reduce"]) from exc

    def _find(self, key: Any) -> Stats | None:
        """Return the Stats logged under ``key`` (any spelling), None if there is none yet."""
        try:
            return self._index[key]
        except (KeyError, TypeError):
            pass
        try:
            return self._stats.get(as_path(key))
        except (TypeError, ValueError):  # a bad key: log_value names it
            return None

    def _log_first(
        self,
        key: Any,
        value: Any,
        settings: tuple[str | None, float | None, float | None, bool],
        with_throughput: bool,
        throughput_ema_coeff: float | None,
        percentiles: Sequence[float] | bool | None,
    ) -> None:
        path = as_path(key)
        stats = self._stats.get(path)
        if stats is None:  # a new key: validate its settings and its first value
            reduce, window, ema_coeff, clear_on_reduce = settings
            spec = make_spec(
                reduce,
                window=window,
                ema_coeff=ema_coeff,
                clear_on_reduce=clear_on_reduce,
                with_throughput=with_throughput,
                throughput_ema_coeff=throughput_ema_coeff,
                percentiles=percentiles,
            )
            if spec["reduce"] not in ITEM_KINDS and not is_number(value):
                raise bad_value(key, value, spec["reduce"])
            stats = Stats._build(spec)
            self._add(path, stats)
        if isinstance(key, str | tuple):
            self._index[key] = stats  # remember this spelling of the key
        self.log_value(path, value)

    def log_dict(
        self,
        values: Mapping[str, Any],
        key: Key | None = None,
        reduce: str | None = "mean",
        window: float | None = None,
        ema_coeff: float | None = None,
        clear_on_reduce: bool = False,
    ) -> None:
        """Log every leaf of a nested dict, under ``key`` + its path, with these settings."""
        prefix = () if key is None else as_path(key)
        for path, value in walk(values, prefix):
            self.log_value(path, value, reduce, window, ema_coeff, clear_on_reduce)

    def log_time(
        self,
        key: Key,
        reduce: str | None = "mean",
        window: float | None = None,
        ema_coeff: float | None = None,
        clear_on_reduce: bool = False,
    ) -> AbstractContextManager[None]:
        """Return a context manager that logs the seconds its block took under ``key``."""
        return _Timer(self, key, (reduce, window, ema_coeff, clear_on_reduce))

    # --- reading --------------------------------------------------------------------------

    def peek(
        self,
        key: Key | None = None,
        default: Any = _MISSING,
        *,
        throughput: bool = False,
        compile: bool = True,
    ) -> Any:
        """Return the reduced value under ``key``, changing nothing.

        A parent key gives the nested dict of its leaves; no key gives the whole tree.
        Values are plain Python data (items logged as numpy arrays stay arrays).
        ``throughput=True`` gives throughputs (units per second) instead: a float for a
        leaf, and for a parent (or no key) a nested dict of the keys that track one, each
        named ``<name>_throughput`` as in RLlib. ``compile=False`` gives each value as a
        list, as RLlib's: ``[value]``, a list of items as it is. A missing key returns
        ``default``, or raises KeyError without one.
        """
        if key is None:
            return self._tree((), throughput, compile)
        try:
            leaf = self._index[key]  # a leaf, under a spelling already logged
        except (KeyError, TypeError):
            pass
        else:
            if compile or throughput:
                return leaf.peek(throughput=throughput)
            return listed(leaf)
        path = as_path(key)
        stats = self._stats.get(path)
        if stats is not None:
            return stats.peek(throughput=throughput) if compile or throughput else listed(stats)
        if path in self._parents:
            return self._tree(path, throughput, compile)
        if default is _MISSING:
            raise KeyError(key)
        return default

    def _tree(self, prefix: Path, throughput: bool, compile: bool = True) -> dict[str, Any]:
        if throughput:
            # Only the keys that track one, each named "<name>_throughput" (RLlib's names,
            # the same as the siblings results() adds).
            tracked = (
                ((*path[:-1], path[-1] + "_throughput"), stats)
                for path, stats in self._stats.items()
                if stats._spec["with_throughput"]
            )
            return nest(tracked, prefix, _throughput_of)
        return nest(self._stats.items(), prefix, _peek_of if compile else listed)

    def __contains__(self, key: object) -> bool:
        try:
            path = as_path(key)
        except TypeError:
            return False
        return path in self._stats or path in self._parents

    def items(self) -> Iterator[tuple[Path, Stats]]:
        """Yield ``(path, stats)`` for every key, in the order the keys were created."""
        return iter(list(self._stats.items()))

    # --- reducing and merging -------------------------------------------------------------

    @overload
    def reduce(
        self,
        key: Key | None = None,
        *,
        return_stats_obj: Literal[True] = True,
        compile: Literal[False] = False,
    ) -> dict[str, Any]: ...

    @overload
    def reduce(
        self, key: Key | None = None, *, return_stats_obj: bool = True, compile: bool = False
    ) -> Any: ...

    def reduce(
        self, key: Key | None = None, *, return_stats_obj: bool = True, compile: bool = False
    ) -> Any:
        """Close a reduce period and return a mergeable snapshot (plain data).

        Every key hands over what is new since the previous ``reduce()`` (values of its
        window, the amount added to a sum, its current EMA, ...), then applies
        ``clear_on_reduce``; windows keep sliding. The snapshot is three parallel lists,
        ``{"version": 1, "keys": [path, ...], "specs": [settings, ...], "data": [...]}``;
        it encodes with events.codec and goes to another logger's ``aggregate()``. Treat it
        as read-only: the specs are shared with this logger.

        ``key`` (RLlib's keyword) reduces only the keys under it; the snapshot's keys are
        then relative to it (a leaf ``key`` gives a snapshot of that one key under its last
        name), and a missing key gives an empty snapshot. ``return_stats_obj=False``
        (RLlib 2.40) or ``compile=True`` (later RLlib) return the reduced values instead,
        as the nested dict ``peek()`` gives just before the period closes (a leaf ``key``:
        its value; a missing one: ``{}``).
        """
        if compile or not return_stats_obj:
            return self._reduce_values(key)
        if key is not None:
            return self._snapshot_under(as_path(key))
        layout = self._layout
        if layout is None:
            layout = self._layout = (list(self._stats), [s._spec for s in self._stats.values()])
        return {
            "version": SNAPSHOT_VERSION,
            "keys": list(layout[0]),
            "specs": list(layout[1]),
            "data": [stats._export() for stats in self._stats.values()],
        }

    def _under(self, prefix: Path) -> list[tuple[Path, Stats]]:
        depth = len(prefix)
        return [(path, stats) for path, stats in self._stats.items() if path[:depth] == prefix]

    def _snapshot_under(self, prefix: Path) -> dict[str, Any]:
        depth = len(prefix)
        chosen = self._under(prefix)
        return {
            "version": SNAPSHOT_VERSION,
            "keys": [path[depth:] or path[-1:] for path, _ in chosen],
            "specs": [stats._spec for _, stats in chosen],
            "data": [stats._export() for _, stats in chosen],
        }

    def _reduce_values(self, key: Key | None) -> Any:
        prefix = () if key is None else as_path(key)
        if prefix in self._stats:  # a leaf: its value
            stats = self._stats[prefix]
            value = stats.peek()
            stats._export()
            return value
        chosen = self._under(prefix)
        values = nest(chosen, prefix, _peek_of)
        for _, stats in chosen:
            stats._export()
        return values

    def aggregate(self, snapshots: Iterable[Mapping[str, Any]], key: Key | None = None) -> None:
        """Merge the snapshots of parallel components (e.g. EnvRunners) under ``key``.

        Per key: sums add what is new (never counting a value twice), windows take the
        newest values of all components (merged per age, as RLlib does), EMAs average,
        min/max compare, items take the last, series concatenate. ValueError if two
        components logged a key with different settings (the keys before it are merged).
        """
        prefix = () if key is None else as_path(key)
        for path, specs, payloads in columns([checked(s) for s in snapshots]):
            full = prefix + path if prefix else path
            stats = self._stats.get(full)
            if stats is None:
                stats = self._new_from(specs[0])
                self._add(full, stats)
            stats._merge_checked(payloads, specs)

    def _new_from(self, spec: Mapping[str, Any]) -> Stats:
        # The spec comes from another logger, maybe another process: check it like a log.
        # Its throughput clock, if any, starts at the first merge (RLlib: NaN until then).
        return Stats._build(checked_spec(spec))

    # --- state ----------------------------------------------------------------------------

    def get_state(self) -> dict[str, Any]:
        """Return everything logged, as plain data encodable with events.codec."""
        stats = [{"key": list(path), **s.get_state()} for path, s in self._stats.items()]
        return {"version": SNAPSHOT_VERSION, "stats": stats}

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Replace everything with ``state`` (from ``get_state()``).

        A malformed state raises ValueError and leaves this logger as it was: the new tree
        is built aside and swapped in whole.
        """
        check_version(state)
        records = state.get("stats")
        if not isinstance(records, list):
            raise ValueError(f"a metrics state's 'stats' is a list, not {type(records).__name__}")
        fresh = MetricsLogger()
        for i, record in enumerate(records):
            try:
                fresh._add(as_path(record["key"]), Stats.from_state(record))
            except (KeyError, TypeError, ValueError, IndexError) as exc:
                raise ValueError(f"bad record {i} in a metrics state: {exc!r}") from exc
        self._stats, self._index, self._parents = fresh._stats, fresh._index, fresh._parents
        self._layout = None

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickling and copy.deepcopy go through get_state(): the same data, fresh caches.
        return (_from_state, (self.get_state(),))

    def reset(self) -> None:
        """Forget every key."""
        self._stats.clear()
        self._index.clear()
        self._parents.clear()
        self._layout = None

    def delete(self, *key: Key, key_error: bool = True) -> None:
        """Delete a key, or a parent key with everything under it.

        ``delete("a", "b")`` and ``delete(("a", "b"))`` are the same. KeyError if missing,
        unless ``key_error=False``.
        """
        path = tuple(part for k in key for part in as_path(k))
        doomed = [p for p in self._stats if p[: len(path)] == path]
        if not doomed:
            if key_error:
                raise KeyError(key[0] if len(key) == 1 else path)
            return
        for p in doomed:
            del self._stats[p]
        self._layout = None
        self._reindex()

    # --- the tree -------------------------------------------------------------------------

    def _add(self, path: Path, stats: Stats) -> None:
        if path in self._parents:
            raise ValueError(f"cannot log under {path!r}: it already has nested keys")
        for depth in range(1, len(path)):
            if path[:depth] in self._stats:
                raise ValueError(f"cannot log under {path!r}: {path[:depth]!r} is a metric")
        self._stats[path] = stats
        self._layout = None
        self._parents.update(path[:depth] for depth in range(1, len(path)))
        self._index[path] = stats
        if len(path) == 1:
            self._index[path[0]] = stats

    def _reindex(self) -> None:
        stats = list(self._stats.items())
        self._stats.clear()
        self._index.clear()
        self._parents.clear()
        for path, s in stats:
            self._add(path, s)

    def __repr__(self) -> str:
        return f"<MetricsLogger with {len(self._stats)} keys>"


class _Timer(AbstractContextManager[None]):
    __slots__ = ("_key", "_logger", "_settings", "_start")

    def __init__(
        self, logger: MetricsLogger, key: Key, settings: tuple[Any, Any, Any, bool]
    ) -> None:
        self._logger, self._key, self._settings = logger, key, settings
        self._start = 0.0

    def __enter__(self) -> None:
        self._start = perf_counter()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # Logged even if the block raised: the time was spent (RLlib does the same).
        self._logger.log_value(self._key, perf_counter() - self._start, *self._settings)


def _from_state(state: Mapping[str, Any]) -> MetricsLogger:
    logger = MetricsLogger()
    logger.set_state(state)
    return logger


def _peek_of(stats: Stats) -> Any:
    return stats.peek()


def _throughput_of(stats: Stats) -> float:
    return stats.throughput
