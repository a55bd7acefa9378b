"""Replay buffers on numpy ring arrays: uniform (``ReplayBuffer``) and prioritized.

A buffer stores rows of named columns (``{"obs": [N, 4], "actions": [N], ...}``). The arrays
are allocated at the first :meth:`ReplayBuffer.add`, with the shapes and dtypes of that
data, and filled as a ring: once ``capacity`` rows are stored, each new row overwrites the
oldest. ``get_state()`` is a plain dict of numpy arrays and numbers that
``events.codec.encode_msgpack`` writes as it is; ``set_state()`` restores it exactly (the
contents, the ring position and the sampling RNG).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from hookbus.kernel import ConfigError

__all__ = (
    "REPLAY_BUFFERS",
    "PrioritizedReplayBuffer",
    "ReplayBuffer",
    "make_replay_buffer",
    "resolve_replay_buffer_config",
)

Seed = int | Sequence[int] | np.random.SeedSequence | None
_MASK64 = (1 << 64) - 1


class ReplayBuffer:
    """Store rows of named numpy columns in a ring of ``capacity`` rows; sample uniformly.

    ``sample(n)`` draws ``n`` rows with replacement (as RLlib's buffers do) and returns
    ``{column: array[n, ...]}``. ``seed`` fixes the sampling sequence.
    """

    type_name: ClassVar[str] = "ReplayBuffer"

    def __init__(self, capacity: int = 50_000, *, seed: Seed = None) -> None:
        """Make an empty buffer; the arrays are allocated at the first ``add``."""
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ConfigError(f"replay buffer capacity must be an int >= 1, got {capacity!r}")
        self.capacity = capacity
        self._columns: dict[str, NDArray[Any]] = {}
        self._size = 0
        self._next = 0  # the row the next add writes first
        self._num_added = 0  # rows added over the buffer's life (evicted ones included)
        self._rng = np.random.Generator(np.random.PCG64(seed))

    # --- adding and sampling ----------------------------------------------------------------

    def add(self, batch: Mapping[str, ArrayLike]) -> None:
        """Append the rows of ``batch`` (columns of equal length), evicting the oldest rows.

        The first call fixes the columns, their dtypes and row shapes; later batches must have
        the same columns and row shapes (values are cast to the stored dtypes).
        """
        arrays = {name: np.asarray(value) for name, value in batch.items()}
        n = self._check_batch(arrays)
        if n == 0:
            return
        if not self._columns:
            self._allocate(arrays)
        self._num_added += n
        if n > self.capacity:  # only the newest rows survive a batch larger than the buffer
            arrays = {name: a[n - self.capacity :] for name, a in arrays.items()}
            n = self.capacity
        start = self._next
        first = min(n, self.capacity - start)  # rows before the ring wraps
        for name, column in self._columns.items():
            a = arrays[name]
            column[start : start + first] = a[:first]
            if first < n:
                column[: n - first] = a[first:]
        self._wrote(start, n)
        self._next = (start + n) % self.capacity
        self._size = min(self._size + n, self.capacity)

    def sample(self, num_items: int) -> dict[str, NDArray[Any]]:
        """Return ``num_items`` rows drawn uniformly with replacement, by column."""
        idx = self._rng.integers(0, self._require_rows(num_items), size=num_items)
        return {name: column[idx] for name, column in self._columns.items()}

    def __len__(self) -> int:
        """Return the number of rows stored."""
        return self._size

    @property
    def num_added(self) -> int:
        """The number of rows added over the buffer's life (evicted ones included)."""
        return self._num_added

    # --- state ------------------------------------------------------------------------------

    def get_state(self) -> dict[str, Any]:
        """Return the buffer as plain data: copies of the stored rows, counters, RNG state.

        ``columns`` holds the stored rows in ring order (row ``next_index`` is the oldest
        once the buffer is full), so restoring needs no reordering.
        """
        return {
            "type": self.type_name,
            "capacity": self.capacity,
            "size": self._size,
            "next_index": self._next,
            "num_added": self._num_added,
            "columns": {name: c[: self._size].copy() for name, c in self._columns.items()},
            "rng": _rng_state(self._rng),
        }

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Restore what :meth:`get_state` returned (capacity included), exactly.

        Everything is read and checked first: a bad state raises and changes nothing.
        """
        self._check_type(state)
        capacity, size = int(state["capacity"]), int(state["size"])
        next_index, num_added = int(state["next_index"]), int(state["num_added"])
        rng = _rng_bits(state["rng"])
        columns = {name: np.asarray(a) for name, a in state["columns"].items()}
        if any(a.ndim == 0 or len(a) != size for a in columns.values()) or not (
            0 <= size <= capacity and 0 <= next_index < capacity
        ):
            raise ValueError(f"inconsistent replay buffer state: size {size}, capacity {capacity}")
        self.capacity = capacity
        self._columns = {}
        if columns:
            self._allocate(columns)
            for name, a in columns.items():
                self._columns[name][:size] = a
        self._size = size
        self._next = next_index
        self._num_added = num_added
        self._rng.bit_generator.state = rng

    # --- internals --------------------------------------------------------------------------

    def _check_type(self, state: Mapping[str, Any]) -> None:
        if state.get("type") != self.type_name:
            raise ValueError(
                f"a {self.type_name} cannot load the state of a {state.get('type')!r} buffer"
            )

    def _allocate(self, arrays: Mapping[str, NDArray[Any]]) -> None:
        # np.zeros maps pages lazily, so a large, mostly empty buffer costs little memory.
        self._columns = {
            name: np.zeros((self.capacity, *a.shape[1:]), dtype=a.dtype)
            for name, a in arrays.items()
        }

    def _check_batch(self, arrays: Mapping[str, NDArray[Any]]) -> int:
        lengths = {len(a) if a.ndim else -1 for a in arrays.values()}
        if len(lengths) != 1 or -1 in lengths:
            shapes = {name: a.shape for name, a in arrays.items()}
            raise ValueError(f"add() needs columns of one common length, got shapes {shapes}")
        if self._columns:
            if set(arrays) != set(self._columns):
                raise ValueError(
                    f"add() got columns {sorted(arrays)}, the buffer holds {sorted(self._columns)}"
                )
            for name, a in arrays.items():
                if a.shape[1:] != self._columns[name].shape[1:]:
                    raise ValueError(
                        f"column {name!r} rows have shape {a.shape[1:]}, "
                        f"the buffer stores {self._columns[name].shape[1:]}"
                    )
        return lengths.pop()

    def _require_rows(self, num_items: int) -> int:
        if isinstance(num_items, bool) or not isinstance(num_items, int) or num_items < 1:
            raise ValueError(f"num_items must be an int >= 1, got {num_items!r}")
        if self._size == 0:
            raise ValueError(f"cannot sample from an empty {self.type_name}")
        return self._size

    def _wrote(self, start: int, n: int) -> None:
        """Hook for subclasses: rows ``start .. start + n`` (mod capacity) were written."""

    def __repr__(self) -> str:
        return f"<{self.type_name} {self._size}/{self.capacity} rows>"


class PrioritizedReplayBuffer(ReplayBuffer):
    """Sample rows in proportion to priority ** alpha; weight them to correct the bias.

    New rows get the largest priority seen so far. ``sample()`` adds ``weights`` (importance
    sampling weights ``(N * P(i)) ** -beta``, normalised by their maximum over the buffer) and
    ``batch_indexes`` (for :meth:`update_priorities`, which sets ``|td_error| + eps``). A
    numpy sum tree keeps sampling and updates at O(log capacity) per row, vectorised.
    """

    type_name: ClassVar[str] = "PrioritizedReplayBuffer"

    def __init__(
        self,
        capacity: int = 50_000,
        *,
        alpha: float = 0.6,
        beta: float = 0.4,
        eps: float = 1e-6,
        seed: Seed = None,
    ) -> None:
        """Make an empty buffer; ``alpha=0`` samples uniformly, ``beta=1`` fully corrects."""
        super().__init__(capacity, seed=seed)
        _check_number("alpha", alpha)
        _check_number("beta", beta)
        _check_number("eps", eps, positive=True)
        self.alpha = float(alpha)
        self.beta = float(beta)
        self.eps = float(eps)
        self._max_priority = 1.0
        self._make_tree()

    def sample(self, num_items: int, *, beta: float | None = None) -> dict[str, NDArray[Any]]:
        """Return ``num_items`` rows drawn by priority, plus ``weights`` and ``batch_indexes``."""
        size = self._require_rows(num_items)
        beta = self.beta if beta is None else beta
        tree, leaves = self._tree, self._leaves
        total = tree[1]
        mass = self._rng.random(num_items) * total
        node = np.ones(num_items, dtype=np.int64)
        # Descend from the root, one level per step for the whole batch at once.
        for _ in range(self._depth):
            node *= 2
            left = tree[node]
            right = mass > left
            mass -= np.where(right, left, 0.0)
            node += right
        # Rounding can step past the last stored row onto an empty (zero) leaf; clamp.
        idx = np.minimum(node - leaves, size - 1)
        p_min = tree[leaves : leaves + size].min() / total
        probs = tree[idx + leaves] / total
        weights = (probs / p_min) ** -beta  # == (N P(i))^-beta / max_j (N P(j))^-beta
        batch = {name: column[idx] for name, column in self._columns.items()}
        batch["weights"] = weights.astype(np.float32)
        batch["batch_indexes"] = idx
        return batch

    def update_priorities(self, batch_indexes: ArrayLike, td_errors: ArrayLike) -> None:
        """Set the priorities of rows ``batch_indexes`` to ``|td_errors| + eps``."""
        idx = np.asarray(batch_indexes, dtype=np.int64)
        priorities = np.abs(np.asarray(td_errors, dtype=np.float64)) + self.eps
        if len(idx) != len(priorities):
            raise ValueError(
                f"{len(idx)} batch_indexes but {len(priorities)} td_errors; they must match"
            )
        if len(idx) and (idx.min() < 0 or idx.max() >= self._size):
            raise ValueError(f"batch_indexes must be in [0, {self._size}), got {idx!r}")
        if len(priorities):
            self._max_priority = max(self._max_priority, float(priorities.max()))
        self._set_priorities(idx, priorities**self.alpha)

    def get_state(self) -> dict[str, Any]:
        """Return the uniform buffer's state plus the settings and the row priorities."""
        state = super().get_state()
        state.update(
            alpha=self.alpha,
            beta=self.beta,
            eps=self.eps,
            max_priority=self._max_priority,
            priorities=self._tree[self._leaves : self._leaves + self._size].copy(),
        )
        return state

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Restore what :meth:`get_state` returned, exactly (or raise and change nothing)."""
        self._check_type(state)
        alpha, beta, eps, max_priority = (
            float(state[k]) for k in ("alpha", "beta", "eps", "max_priority")
        )
        priorities = np.asarray(state["priorities"], dtype=np.float64)
        if priorities.shape != (int(state["size"]),):
            raise ValueError(f"{priorities.shape} priorities for {state['size']!r} rows")
        super().set_state(state)
        self.alpha, self.beta, self.eps = alpha, beta, eps
        self._max_priority = max_priority
        self._make_tree()
        self._tree[self._leaves : self._leaves + len(priorities)] = priorities
        # Rebuild every inner node, level by level from the leaves up.
        level = self._leaves
        while level > 1:
            half = level // 2
            self._tree[half:level] = self._tree[level : 2 * level : 2]
            self._tree[half:level] += self._tree[level + 1 : 2 * level : 2]
            level = half

    def _make_tree(self) -> None:
        # A perfect binary tree: node i has children 2i, 2i + 1; leaves start at `_leaves`.
        self._depth = max(1, math.ceil(math.log2(self.capacity)))
        self._leaves = 1 << self._depth
        self._tree = np.zeros(2 * self._leaves, dtype=np.float64)

    def _wrote(self, start: int, n: int) -> None:
        idx = (start + np.arange(n)) % self.capacity
        self._set_priorities(idx, np.full(n, self._max_priority**self.alpha))

    def _set_priorities(self, idx: NDArray[np.int64], values: NDArray[np.float64]) -> None:
        tree = self._tree
        node = idx + self._leaves
        tree[node] = values
        # All leaves sit at one depth, so updating level by level sees children before
        # parents; a node named twice gets the same sum twice, so duplicates are harmless.
        for _ in range(self._depth):
            node //= 2
            tree[node] = tree[2 * node] + tree[2 * node + 1]


REPLAY_BUFFERS: dict[str, type[ReplayBuffer]] = {
    "ReplayBuffer": ReplayBuffer,
    "PrioritizedReplayBuffer": PrioritizedReplayBuffer,
}
"""The replay buffer types by name (``replay_buffer_config={"type": name, ...}``)."""

# RLlib's names for the same buffers (its episode buffers store episodes; ours store rows).
_ALIASES = {
    "EpisodeReplayBuffer": "ReplayBuffer",
    "PrioritizedEpisodeReplayBuffer": "PrioritizedReplayBuffer",
}
_SETTINGS: dict[str, dict[str, Any]] = {
    "ReplayBuffer": {"capacity": 50_000},
    "PrioritizedReplayBuffer": {"capacity": 50_000, "alpha": 0.6, "beta": 0.4, "eps": 1e-6},
}


def resolve_replay_buffer_config(config: object) -> dict[str, Any]:
    """Return ``config`` with its type's defaults filled in; ConfigError if it is bad."""
    if not isinstance(config, Mapping):
        raise ConfigError(f"replay_buffer_config must be a dict, got {config!r}")
    kind = config.get("type", "ReplayBuffer")
    name = _ALIASES.get(kind, kind) if isinstance(kind, str) else kind
    if name not in _SETTINGS:
        raise ConfigError(
            f"unknown replay buffer type {kind!r}; known types: {', '.join(REPLAY_BUFFERS)}"
        )
    allowed = _SETTINGS[name]
    for key in config:
        if key != "type" and key not in allowed:
            raise ConfigError(
                f"{name} has no setting {key!r}; allowed: {', '.join(['type', *allowed])}"
            )
    return {"type": name, **allowed, **{k: v for k, v in config.items() if k != "type"}}


def make_replay_buffer(config: Mapping[str, Any], *, seed: Seed = None) -> ReplayBuffer:
    """Build the buffer ``replay_buffer_config`` describes (checked and defaults filled in)."""
    settings = resolve_replay_buffer_config(config)
    cls = REPLAY_BUFFERS[settings.pop("type")]
    capacity = settings.pop("capacity")
    try:
        return cls(capacity, seed=seed, **settings)
    except ConfigError as exc:
        raise ConfigError(f"bad replay_buffer_config: {exc}") from None


def _check_number(name: str, value: object, *, positive: bool = False) -> None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value < math.inf:
        if value > 0 or (value == 0 and not positive):  # NaN fails both
            return
    bound = "> 0" if positive else ">= 0"
    raise ConfigError(f"{name} must be a finite number {bound}, got {value!r}")


def _rng_state(rng: np.random.Generator) -> NDArray[np.uint64]:
    """Return a PCG64 state as 6 uint64s (its 128-bit ints do not fit MessagePack ints)."""
    bits = rng.bit_generator.state
    state, inc = bits["state"]["state"], bits["state"]["inc"]
    words = [state >> 64, state & _MASK64, inc >> 64, inc & _MASK64]
    return np.array([*words, bits["has_uint32"], bits["uinteger"]], dtype=np.uint64)


def _rng_bits(words: ArrayLike) -> dict[str, Any]:
    """Return the PCG64 state that :func:`_rng_state`'s six words describe."""
    w = [int(x) for x in np.asarray(words, dtype=np.uint64)]
    if len(w) != 6:
        raise ValueError(f"a replay buffer's rng state is 6 uint64 words, got {len(w)}")
    return {
        "bit_generator": "PCG64",
        "state": {"state": (w[0] << 64) | w[1], "inc": (w[2] << 64) | w[3]},
        "has_uint32": w[4],
        "uinteger": w[5],
    }
