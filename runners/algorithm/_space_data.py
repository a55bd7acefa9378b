"""Gymnasium spaces as plain data, and back: what a checkpoint keeps of an added module.

Checkpoints are data (SPEC.md, "Data never names code"): a space is written as its kind
and numbers (numpy arrays travel through ``events.codec``), never pickled, and reading one
builds only the spaces named here. ``Box``, ``Discrete``, ``MultiDiscrete``,
``MultiBinary``, ``Dict`` and ``Tuple`` (nested) are kept; any other space is None.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

__all__ = ("space_from_data", "space_to_data")


def space_to_data(space: Any) -> dict[str, Any] | None:
    """Return ``space`` as plain data, or None for a kind of space not kept here."""
    spaces = gym.spaces
    if isinstance(space, spaces.Box):
        return {
            "kind": "Box",
            "low": np.asarray(space.low).copy(),
            "high": np.asarray(space.high).copy(),
            "dtype": np.dtype(space.dtype).str,
        }
    if isinstance(space, spaces.Discrete):
        return {"kind": "Discrete", "n": int(space.n), "start": int(space.start)}
    if isinstance(space, spaces.MultiDiscrete):
        return {"kind": "MultiDiscrete", "nvec": np.asarray(space.nvec).copy()}
    if isinstance(space, spaces.MultiBinary):
        return {"kind": "MultiBinary", "n": np.asarray(space.n).tolist()}
    if isinstance(space, spaces.Dict | spaces.Tuple):
        parts = space.spaces.items() if isinstance(space, spaces.Dict) else enumerate(space)
        inner = {str(key): space_to_data(part) for key, part in parts}
        if any(value is None for value in inner.values()):
            return None
        return {"kind": type(space).__name__, "spaces": inner}
    return None


def space_from_data(data: Any) -> gym.Space[Any]:
    """Return the space ``space_to_data`` described; ValueError for anything else."""
    if not isinstance(data, dict) or "kind" not in data:
        raise ValueError(f"not a space's data: {data!r}")
    kind = data["kind"]
    try:
        if kind == "Box":
            dtype = np.dtype(str(data["dtype"]))
            low, high = np.asarray(data["low"]), np.asarray(data["high"])
            return gym.spaces.Box(low, high, dtype=dtype.type)
        if kind == "Discrete":
            return gym.spaces.Discrete(int(data["n"]), start=int(data["start"]))
        if kind == "MultiDiscrete":
            return gym.spaces.MultiDiscrete(np.asarray(data["nvec"]))
        if kind == "MultiBinary":
            return gym.spaces.MultiBinary(data["n"])
        if kind == "Dict":
            return gym.spaces.Dict({k: space_from_data(v) for k, v in data["spaces"].items()})
        if kind == "Tuple":
            inner = data["spaces"]
            return gym.spaces.Tuple([space_from_data(inner[str(i)]) for i in range(len(inner))])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"bad {kind} space data: {exc}") from exc
    raise ValueError(f"unknown kind of space {kind!r}")
