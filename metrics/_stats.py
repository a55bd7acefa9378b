"""``Stats``: one key's reduction, and the registry of its kinds.

``Stats(reduce=..., window=..., ...)`` validates the settings once and returns an instance of
the private subclass that implements that kind (``_scalar.py``, ``_window.py``): each kind's
``push`` is then a short method without any branching on settings, which keeps
``MetricsLogger.log_value`` on an existing key well under a microsecond.

Every kind speaks the same small protocol:

- ``push(value)`` adds one value (the hot path; NaNs are dropped by numeric kinds);
- ``peek()`` returns the reduced value as plain Python data, changing nothing;
- ``_export()`` returns what is new since the previous call (the merge payload, plain data)
  and applies ``clear_on_reduce``; ``reduce()`` wraps it with the spec;
- ``_merge(payloads, specs)`` folds in the payloads of parallel components (runners);
- ``_set(value)`` makes ``value`` the one value held (``MetricsLogger.set_value``);
- ``_dump()`` / ``_load(state)`` save and restore everything, for checkpoints.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from time import perf_counter
from typing import Any, ClassVar

from ._spec import checked_spec, make_spec, spec_settings

__all__ = ("Stats",)


class Stats:
    """Reduce the values logged under one key (mean over a window, EMA, min, max, sum, ...).

    ``Stats(reduce="mean", window=None, ema_coeff=None, clear_on_reduce=False,
    with_throughput=False, throughput_ema_coeff=None, percentiles=None)`` takes the same
    settings as ``MetricsLogger.log_value``; bad combinations raise ValueError.
    """

    __slots__ = ("_spec",)
    _kinds: ClassVar[tuple[str, ...]] = ()  # the spec kinds a subclass implements
    _registry: ClassVar[dict[str, type[Stats]]] = {}

    _spec: dict[str, Any]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for kind in cls.__dict__.get("_kinds", ()):  # its own kinds, not inherited ones
            Stats._registry[kind] = cls

    def __new__(
        cls,
        reduce: str | None = "mean",
        *,
        window: float | None = None,
        ema_coeff: float | None = None,
        clear_on_reduce: bool = False,
        with_throughput: bool = False,
        throughput_ema_coeff: float | None = None,
        percentiles: Sequence[float] | bool | None = None,
    ) -> Stats:
        spec = make_spec(
            reduce,
            window=window,
            ema_coeff=ema_coeff,
            clear_on_reduce=clear_on_reduce,
            with_throughput=with_throughput,
            throughput_ema_coeff=throughput_ema_coeff,
            percentiles=percentiles,
        )
        return Stats._build(spec)

    @staticmethod
    def _build(spec: dict[str, Any]) -> Stats:
        """Return an empty Stats for an already canonical ``spec`` (no validation)."""
        stats = object.__new__(Stats._registry[spec["kind"]])
        stats._spec = spec
        stats._setup()
        return stats

    # --- the protocol each kind implements ---------------------------------------------------

    def _setup(self) -> None:
        raise NotImplementedError

    def push(self, value: Any) -> None:
        """Add one value."""
        raise NotImplementedError

    def push_many(self, values: Sequence[Any]) -> None:
        """Add ``values`` in order, as that many ``push`` calls do (kinds may do it at once)."""
        push = self.push
        for value in values:
            push(value)

    def peek(self, *, throughput: bool = False) -> Any:
        """Return the reduced value (plain Python data) without changing anything.

        With ``throughput=True``, return the throughput estimate (units per second) instead;
        ValueError if this Stats does not track one.
        """
        if throughput:
            return self.throughput
        return self._peek()

    def _peek(self) -> Any:
        raise NotImplementedError

    def _export(self) -> Any:
        raise NotImplementedError

    def _merge(self, payloads: Sequence[Any], specs: Sequence[Mapping[str, Any]]) -> None:
        raise NotImplementedError

    def _set(self, value: Any) -> None:
        """Replace everything held with the single value ``value`` (counted as new)."""
        raise NotImplementedError

    def _dump(self) -> dict[str, Any]:
        raise NotImplementedError

    def _load(self, state: Mapping[str, Any]) -> None:
        raise NotImplementedError

    def _start_clock(self, now: float) -> None:
        """Start the throughput clock at ``now`` (kinds without a throughput ignore it)."""

    def __len__(self) -> int:
        """Return how many values this Stats holds (1 for running reductions)."""
        raise NotImplementedError

    # --- public API built on the protocol ----------------------------------------------------

    @property
    def settings(self) -> dict[str, Any]:
        """The canonical settings: ``Stats(**stats.settings)`` builds an equivalent Stats."""
        return spec_settings(self._spec)

    @property
    def throughput(self) -> float:
        """The throughput estimate in units per second (NaN until there is one)."""
        raise ValueError(
            f"this Stats (reduce={self._spec['reduce']!r}) does not track a throughput; "
            "log it with reduce='sum' or 'lifetime_sum' and with_throughput=True"
        )

    def reduce(self) -> dict[str, Any]:
        """Close a reduce period: return a mergeable part and apply ``clear_on_reduce``.

        The part is plain data, ``{"spec": ..., "data": ...}``, where ``data`` holds only what
        is new since the previous ``reduce()``; pass parts to another Stats' ``merge()``.
        """
        return {"spec": self._spec, "data": self._export()}

    def merge(self, parts: Iterable[Mapping[str, Any]]) -> None:
        """Fold in the ``reduce()`` parts of parallel components (e.g. one per EnvRunner).

        Raises ValueError if a part was reduced differently (another reduce, window, ...).
        """
        parts = list(parts)
        self._merge_checked([part["data"] for part in parts], [part["spec"] for part in parts])

    def _merge_checked(self, payloads: Sequence[Any], specs: Sequence[Mapping[str, Any]]) -> None:
        kind = self._spec["kind"]
        for spec in specs:
            if spec.get("kind") != kind:
                raise ValueError(
                    f"cannot merge a {spec.get('kind')!r} part into a {kind!r} Stats: "
                    "parallel components must log a key with the same settings"
                )
        if payloads:
            self._merge(payloads, specs)

    def get_state(self) -> dict[str, Any]:
        """Return everything this Stats holds, as plain data (encodable with events.codec)."""
        return {"spec": dict(self._spec), "state": self._dump()}

    @staticmethod
    def from_state(state: Mapping[str, Any]) -> Stats:
        """Rebuild a Stats from ``get_state()``'s output (throughput clocks restart now)."""
        stats = Stats._build(checked_spec(state["spec"]))
        stats._load(state["state"])
        stats._start_clock(perf_counter())
        return stats

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickling and copy.deepcopy go through the state: from_state picks the kind's class.
        return (Stats.from_state, (self.get_state(),))

    def __repr__(self) -> str:
        shown = self.settings
        if not shown["with_throughput"]:
            del shown["throughput_ema_coeff"]
        settings = ", ".join(f"{k}={v!r}" for k, v in shown.items() if v)
        return f"Stats({settings}; peek={self._peek()!r}, len={len(self)})"
