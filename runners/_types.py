"""Names for what passes between runners' rooms: agent and module ids, batched observations.

RLlib's ``AgentID`` and ``ModuleID`` (``rllib/utils/typing.py``), and what a gymnasium
vector env returns as observations. Here at the top of ``runners/``, beside
``_rl_module.py``, so that envs, episodes, configs and EnvRunners name them alike.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, TypeAlias

import numpy.typing as npt

__all__ = ("AgentID", "Batched", "ModuleID")

AgentID: TypeAlias = Hashable
"""An agent's key in a multi-agent env's dicts: anything hashable, a string most often
(RLlib's ``AgentID``, ``Hashable | str``)."""

ModuleID: TypeAlias = str
"""A module's (policy's) key in a ``MultiRLModule`` and in the agent-to-module mapping."""

Batched: TypeAlias = "npt.NDArray[Any] | dict[str, Batched] | tuple[Batched, ...]"
"""A vector env's observations: an array with a row per sub-env, or a dict or tuple of
them (as gymnasium batches a Dict or Tuple space)."""
