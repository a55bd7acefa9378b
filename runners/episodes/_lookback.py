"""Reading an episode's lists by RLlib's indices, the lookback buffer of a cut chunk included.

An episode keeps its own steps in plain lists (``observations[0]`` is the observation at its
``t_started``). A chunk made by ``cut(len_lookback_buffer=n)`` also carries up to ``n`` steps
of its predecessor, RLlib's *lookback buffer*: visible only to getters called with
``neg_index_as_lookback=True``, where index -1 is the step just before ``t_started``. They
live in a ``Lookback`` beside the lists, so that nothing else (``len``, ``get_return``, the
learner, the wire) ever sees them, and ``add_step`` stays what it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ("Indices", "Lookback", "gather", "gather_with_lookback")

Indices = int | slice | Sequence[int] | None


class Lookback:
    """The ``n`` steps before a chunk's first: observations and infos before its first
    observation, and the actions and rewards that led to them (oldest first)."""

    __slots__ = ("actions", "infos", "observations", "rewards")

    def __init__(
        self,
        observations: list[Any],
        actions: list[Any],
        rewards: list[float],
        infos: list[dict[str, Any]],
    ) -> None:
        if not len(observations) == len(actions) == len(rewards) == len(infos):
            raise ValueError(
                f"a lookback buffer holds as many observations, actions, rewards and infos: "
                f"got {len(observations)}, {len(actions)}, {len(rewards)} and {len(infos)}"
            )
        self.observations = observations
        self.actions = actions
        self.rewards = rewards
        self.infos = infos

    def __len__(self) -> int:
        return len(self.actions)


def gather(items: list[Any], indices: Indices, *, stack: bool = True) -> Any:
    """Return items: all (stacked), one (an int, negative from the end), a slice or a list."""
    if isinstance(indices, int):
        return items[indices]
    if indices is None:
        picked = items
    elif isinstance(indices, slice):
        picked = items[indices]
    else:
        picked = [items[i] for i in indices]
    return _stacked(picked) if stack else list(picked)


def gather_with_lookback(
    before: list[Any], items: list[Any], indices: Indices, *, stack: bool = True
) -> Any:
    """Return items by RLlib's ``neg_index_as_lookback=True`` indices.

    Index 0 is ``items[0]`` and negative indices count back into ``before`` (the lookback
    buffer, oldest first): -1 is its last item. An int or a list of ints out of range is an
    IndexError; a slice takes what exists (RLlib: "no index error if a slice is given").
    """
    offset = len(before)
    joined = before + items if offset else items
    if isinstance(indices, int):
        return joined[_position(indices, offset, len(joined))]
    if indices is None:
        picked = items
    elif isinstance(indices, slice):
        start = offset + (indices.start or 0)
        stop = len(joined) if indices.stop is None else offset + indices.stop
        picked = joined[max(start, 0) : max(stop, 0) : indices.step]
    else:
        picked = [joined[_position(i, offset, len(joined))] for i in indices]
    return _stacked(picked) if stack else list(picked)


def _position(index: int, offset: int, size: int) -> int:
    position = offset + index
    if not 0 <= position < size:
        raise IndexError(
            f"index {index} is outside this chunk and its lookback buffer of {offset} steps"
        )
    return position


def _stacked(picked: list[Any]) -> Any:
    # Dict and Tuple observations batch leaf by leaf, as RLlib's finalized episodes hold
    # them: a dict (tuple) of stacked arrays.
    if picked and isinstance(picked[0], dict):
        try:
            return {key: _stacked([item[key] for item in picked]) for key in picked[0]}
        except (KeyError, TypeError):  # not all alike: keep the list
            return list(picked)
    if picked and isinstance(picked[0], tuple):
        try:
            return tuple(_stacked([item[i] for item in picked]) for i in range(len(picked[0])))
        except (IndexError, TypeError):
            return list(picked)
    try:
        return np.asarray(picked) if picked else np.empty((0,))
    except ValueError:  # ragged: keep the list
        return list(picked)
