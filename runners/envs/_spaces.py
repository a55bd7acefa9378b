"""Observation spaces as an MLP takes them: one flat float32 row per observation.

RLlib's order (``rllib/utils/numpy.py``'s ``flatten_inputs_to_1d_tensor`` over dm-tree's
flattening of the space): Dict keys sorted, Tuple items in order, nested; a Box (any
shape) is flattened, a Discrete one-hot encoded, a MultiDiscrete one-hot per component
(concatenated), a MultiBinary taken as floats. Unlike RLlib's one-hot, a Discrete's (or
MultiDiscrete's) ``start`` is subtracted first, so ``Discrete(3, start=-1)`` encodes -1 as
``[1, 0, 0]`` instead of failing.

A :class:`Flattener` is compiled once per space: a list of leaves, each with its path
into the (nested) observation, its offset in the row and how it is encoded.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.spaces import Box, Dict, Discrete, MultiBinary, MultiDiscrete, Tuple
from numpy.typing import NDArray

from hookbus.kernel import ConfigError

from .._types import Batched

__all__ = (
    "SUPPORTED_OBSERVATION_SPACES",
    "Flattener",
    "check_observation_space",
    "is_flat_box",
    "row_splitter",
)

SUPPORTED_OBSERVATION_SPACES = (
    "Box (any shape), Discrete, MultiDiscrete, MultiBinary, and Dict or Tuple of these (nested)"
)

_LEAVES = (Box, Discrete, MultiDiscrete, MultiBinary)


def check_observation_space(space: object) -> None:
    """Raise ConfigError unless ``space`` (and every space nested in it) is supported."""
    if isinstance(space, _LEAVES):
        return
    if isinstance(space, Dict):
        for sub in space.spaces.values():
            check_observation_space(sub)
        return
    if isinstance(space, Tuple):
        for sub in space.spaces:
            check_observation_space(sub)
        return
    raise ConfigError(
        f"unsupported observation space {space!r}: hookbus's modules take "
        f"{SUPPORTED_OBSERVATION_SPACES}"
    )


def is_flat_box(space: object) -> bool:
    """Tell whether ``space`` is a Box the module takes as it is (no pipeline needed)."""
    return isinstance(space, Box) and len(space.shape) >= 1


def row_splitter(space: gym.Space[Any]) -> Callable[[Any], list[Any]]:
    """Return how a vector env's batched observations become one observation per sub-env.

    ``list`` for spaces that batch into one array (Box, Discrete, ...): one C call, the
    hot path's. Dict and Tuple batch into dicts and tuples of arrays, taken apart leaf by
    leaf into one dict (tuple) per sub-env.
    """
    if isinstance(space, _LEAVES):
        return list
    return functools.partial(_split, space)


def _split(space: gym.Space[Any], batch: Any) -> list[Any]:
    if isinstance(space, Dict):
        keys = list(space.spaces)
        columns = [_split(space.spaces[k], batch[k]) for k in keys]
        return [dict(zip(keys, row, strict=True)) for row in zip(*columns, strict=True)]
    if isinstance(space, Tuple):
        columns = [_split(sub, batch[i]) for i, sub in enumerate(space.spaces)]
        return [tuple(row) for row in zip(*columns, strict=True)]
    return list(batch)


class _Leaf:
    __slots__ = ("blocks", "kind", "offset", "path", "sizes", "starts")

    def __init__(self, path: tuple[Any, ...], kind: str, offset: int, sizes: Any, starts: Any):
        self.path, self.kind, self.offset, self.sizes, self.starts = (
            path,
            kind,
            offset,
            sizes,
            starts,
        )
        # One-hot leaves: component j's block starts after components 0..j-1 (computed once:
        # _write runs at every env step).
        self.blocks = (
            None if kind == "box" else offset + np.concatenate(([0], np.cumsum(sizes)[:-1]))
        )


class Flattener:
    """Flatten observations of one space into float32 rows of :attr:`size` numbers.

    ``batch(batched)`` takes what a vector env returns (leaves stacked along a first axis),
    ``stack(observations)`` a sequence of single observations (an episode's), ``one(obs)``
    one observation.
    """

    def __init__(self, space: gym.Space[Any]) -> None:
        check_observation_space(space)
        self.space = space
        self._leaves: list[_Leaf] = []
        self.size = self._compile(space, (), 0)
        self.observation_space = Box(-np.inf, np.inf, (self.size,), np.float32)
        """The flattened space: a 1-D float32 Box, unbounded (as RLlib's)."""

    def _compile(self, space: gym.Space[Any], path: tuple[Any, ...], offset: int) -> int:
        if isinstance(space, Dict):
            for key in sorted(space.spaces):  # dm-tree's order: keys sorted
                offset = self._compile(space.spaces[key], (*path, key), offset)
            return offset
        if isinstance(space, Tuple):
            for i, sub in enumerate(space.spaces):
                offset = self._compile(sub, (*path, i), offset)
            return offset
        if isinstance(space, Discrete):
            leaf = _Leaf(path, "discrete", offset, np.array([int(space.n)]), int(space.start))
            self._leaves.append(leaf)
            return offset + int(space.n)
        if isinstance(space, MultiDiscrete):
            sizes = np.asarray(space.nvec, dtype=np.int64).ravel()
            starts = np.asarray(space.start, dtype=np.int64).ravel()
            self._leaves.append(_Leaf(path, "multi_discrete", offset, sizes, starts))
            return offset + int(sizes.sum())
        size = int(np.prod(space.shape, dtype=np.int64)) if space.shape else 1
        self._leaves.append(_Leaf(path, "box", offset, size, None))
        return offset + size

    def batch(self, batched: Batched) -> NDArray[np.float32]:
        """Return rows [B, size] for a vector env's batched observations."""
        n = len(_at(batched, self._leaves[0].path)) if self._leaves else 0
        out = np.zeros((n, self.size), dtype=np.float32)
        for leaf in self._leaves:
            _write(out, leaf, np.asarray(_at(batched, leaf.path)))
        return out

    def stack(self, observations: Sequence[Any]) -> NDArray[np.float32]:
        """Return rows [N, size] for ``observations``, one row each."""
        out = np.zeros((len(observations), self.size), dtype=np.float32)
        for leaf in self._leaves:
            path = leaf.path
            values = np.asarray([_at(obs, path) for obs in observations])
            _write(out, leaf, values)
        return out

    def one(self, observation: Any) -> NDArray[np.float32]:
        """Return the row [size] of one observation."""
        row: NDArray[np.float32] = self.stack([observation])[0]
        return row


def _at(obs: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        obs = obs[key]
    return obs


def _write(out: NDArray[np.float32], leaf: _Leaf, values: NDArray[Any]) -> None:
    n = len(out)
    if leaf.kind == "box":
        out[:, leaf.offset : leaf.offset + leaf.sizes] = values.reshape(n, leaf.sizes)
        return
    index = values.reshape(n, -1).astype(np.int64) - leaf.starts
    if index.size and (index.min() < 0 or (index >= leaf.sizes).any()):
        raise ValueError(
            f"observation values {values.tolist()!r} at {list(leaf.path)!r} are outside "
            f"their space (sizes {leaf.sizes.tolist()}, starts {np.ravel(leaf.starts).tolist()})"
        )
    # Component j of a row is one-hot in the block that starts after components 0..j-1.
    k = index.shape[1]
    rows = np.arange(n) if k == 1 else np.repeat(np.arange(n), k)
    out[rows, (leaf.blocks + index).ravel()] = 1.0
