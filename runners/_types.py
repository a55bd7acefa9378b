"""Names for what passes between runners' rooms: ids, env settings, batched observations.

RLlib's ``AgentID`` and ``ModuleID`` (``rllib/utils/typing.py``), what an env setting may
be, and what a gymnasium vector env returns as observations. Here at the top of ``runners/``, beside
``_rl_module.py``, so that envs, episodes, configs and EnvRunners name them alike.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:  # names for annotations only: episodes (replay's rules) load no gymnasium
    import gymnasium as gym
    import numpy.typing as npt

__all__ = ("AgentID", "Batched", "EnvSpec", "ModuleID")

AgentID: TypeAlias = Hashable
"""An agent's key in a multi-agent env's dicts: anything hashable, a string most often
(RLlib's ``AgentID``, ``Hashable | str``)."""

ModuleID: TypeAlias = str
"""A module's (policy's) key in a ``MultiRLModule`` and in the agent-to-module mapping."""

EnvSpec: TypeAlias = "str | type[gym.Env[Any, Any]] | Callable[..., gym.Env[Any, Any]]"
"""An env as a setting names it: a gymnasium id or ``module:Name`` string, an Env class
(a ``MultiAgentEnv`` too), or a creator taking the ``EnvContext``."""

Batched: TypeAlias = "npt.NDArray[Any] | dict[str, Batched] | tuple[Batched, ...]"
"""A vector env's observations: an array with a row per sub-env, or a dict or tuple of
them (as gymnasium batches a Dict or Tuple space)."""
