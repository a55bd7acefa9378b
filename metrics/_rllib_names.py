"""RLlib's other ``MetricsLogger`` names: ``set_value``, ``peek_results`` and the deprecated
``merge_and_log_n_dicts``, so that RLlib users' callbacks run unchanged.

They live in a mixin that ``MetricsLogger`` inherits, apart from the logger's own tree
(``_logger.py``); each is written on the logger's public protocol plus ``_index``/``_stats``
(its key index) and a Stats kind's ``_set``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from ._keys import Key, Path, as_path
from ._spec import ITEM_KINDS, bad_value, is_number
from ._stats import Stats
from ._values import peek_results

__all__ = ("RLlibNames",)


class _Logger(Protocol):
    """What the mixin's methods use of the MetricsLogger they are part of."""

    _index: dict[Any, Stats]
    _stats: dict[Path, Stats]

    def log_value(
        self,
        key: Key,
        value: Any,
        reduce: str | None = ...,
        window: float | None = ...,
        ema_coeff: float | None = ...,
        clear_on_reduce: bool = ...,
        *,
        with_throughput: bool = ...,
        throughput_ema_coeff: float | None = ...,
        percentiles: Sequence[float] | bool | None = ...,
    ) -> None: ...

    def aggregate(self, snapshots: Iterable[Mapping[str, Any]], key: Key | None = None) -> None: ...


class RLlibNames:
    """RLlib's ``set_value``, ``peek_results`` and ``merge_and_log_n_dicts``."""

    __slots__ = ()

    def set_value(
        self: _Logger,
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
        """Make ``value`` the one value held under ``key`` (RLlib 2.40's ``set_value``).

        An existing key keeps its settings and forgets its values: a window holds just
        ``value``, an EMA, min, max or sum becomes ``value``, a list of items ``[value]``.
        A sum hands the jump to its next snapshot, so merged totals follow it. A new key
        is logged with these settings, exactly as ``log_value`` does.
        """
        stats = self._index.get(key) if isinstance(key, str | tuple) else None
        if stats is None:
            stats = self._stats.get(as_path(key))
        if stats is None:
            self.log_value(
                key,
                value,
                reduce,
                window,
                ema_coeff,
                clear_on_reduce,
                with_throughput=with_throughput,
                throughput_ema_coeff=throughput_ema_coeff,
                percentiles=percentiles,
            )
            return
        kind = stats._spec["reduce"]
        if kind not in ITEM_KINDS and not is_number(value):
            raise bad_value(key, value, kind)
        try:
            stats._set(value)
        except (TypeError, ValueError, OverflowError) as exc:  # e.g. 10**400 in a window
            raise bad_value(key, value, kind) from exc

    @staticmethod
    def peek_results(results: Any, compile: bool = True) -> Any:
        """Return ``results`` with its Stats and snapshots turned into reduced values.

        RLlib's helper for what ``reduce()`` returned: a snapshot becomes the nested dict
        of the values it carries (what was new since the previous ``reduce()``), a Stats
        its ``peek()``; dicts, lists and tuples are walked and other leaves kept.
        ``compile=False`` gives lists of values, as ``peek(compile=False)``.
        """
        return peek_results(results, compile)

    def merge_and_log_n_dicts(
        self: _Logger,
        stats_dicts: Iterable[Mapping[str, Any]],
        *,
        key: Key | None = None,
        reduce: str | None = "mean",
        window: float | None = None,
        ema_coeff: float | None = None,
        clear_on_reduce: bool = False,
    ) -> None:
        """Merge snapshots as ``aggregate()`` does: RLlib's deprecated name for it.

        Warns with RLlib's DeprecationWarning. ``reduce``, ``window``, ``ema_coeff`` and
        ``clear_on_reduce`` are accepted as RLlib 2.40 did and, as there for the output of
        ``reduce()``, not used: a snapshot carries its keys' own settings.
        """
        warnings.warn(
            "`merge_and_log_n_dicts` has been deprecated. Use `aggregate` instead. "
            "This will raise an error in the future!",
            DeprecationWarning,
            stacklevel=2,
        )
        self.aggregate(stats_dicts, key=key)
