"""What agents and modules are called: RLlib's ``AgentID`` and ``ModuleID``.

Here at the top of ``runners/`` beside ``_rl_module.py``, so that envs, episodes, configs
and EnvRunners name the keys of a multi-agent env's dicts and of a ``MultiRLModule`` alike.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TypeAlias

__all__ = ("AgentID", "ModuleID")

AgentID: TypeAlias = Hashable
"""An agent's key in a multi-agent env's dicts: anything hashable, a string most often
(RLlib's ``AgentID``, ``Hashable | str``)."""

ModuleID: TypeAlias = str
"""A module's (policy's) key in a ``MultiRLModule`` and in the agent-to-module mapping."""
