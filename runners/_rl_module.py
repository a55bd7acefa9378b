"""What acts: the module Protocols that EnvRunners act with and learners train.

A module is any object with these methods, hookbus's (``PPOModule``, ``DQNModule``,
``MultiAgentModule``) and a custom learner's alike (``training(learner_class=...)``,
docs/runners.md): nothing has to subclass them, and mypy checks the fit wherever a module
is handed in. Here at the top of ``runners/`` so that every room may name them: exploration
and the EnvRunners act with modules, the Algorithm syncs their weights, learners train them.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator, Mapping
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from hookbus.kernel import ConfigError

__all__ = ("ActionDistInputs", "MultiRLModule", "QValues", "RLModule", "Stateful")


class Stateful(Protocol):
    """Give plain-data state and take it back: what checkpoints and weight syncs use."""

    def get_state(self) -> dict[str, Any]:
        """Return the state as plain data (numpy array copies, numbers, strings, dicts)."""
        ...

    def set_state(self, state: dict[str, Any], /) -> None:
        """Load what ``get_state()`` returned."""
        ...


class RLModule(Stateful, Protocol):
    """Choose actions for a batch of observations: one policy's networks (RLlib's RLModule).

    The minimal module is ``forward_inference`` alone: a class that subclasses ``RLModule``
    (as RLlib's heuristic modules do) inherits the rest, exploring as it infers and with
    no state. ``RLModuleSpec(module_class=...)`` builds one (``config/_module_spec.py``).
    """

    def forward_exploration(self, obs: NDArray[Any], rng: np.random.Generator, /) -> NDArray[Any]:
        """Return one action per row of ``obs``, exploring (sampled from the policy).

        Inherited: ``forward_inference(obs)``.
        """
        return self.forward_inference(obs)

    def forward_inference(self, obs: NDArray[Any], /) -> NDArray[Any]:
        """Return one greedy action per row of ``obs``."""
        ...

    def get_state(self) -> dict[str, Any]:
        """Return the state as plain data. Inherited: no state (``{}``)."""
        return {}

    def set_state(self, state: dict[str, Any], /) -> None:
        """Load what ``get_state()`` returned. Inherited: takes only ``{}``."""
        if state:
            raise ValueError(f"{type(self).__name__} has no state to load, got {sorted(state)!r}")


class MultiRLModule(Stateful, Protocol):
    """Hold one module per module id (RLlib's MultiRLModule; hookbus's ``MultiAgentModule``).

    Its state is nested by module id.
    """

    def __getitem__(self, module_id: str, /) -> RLModule:
        """Return the module ``module_id``."""
        ...

    def __iter__(self) -> Iterator[str]:
        """Iterate over the module ids."""
        ...

    def __len__(self) -> int:
        """Return the number of modules."""
        ...


_LOADER = ("hookbus.runners.algorithms", "load_module_checkpoint")
"""Who reads a module's folder: the room at the top, which holds hookbus's module classes
(PPO's, DQN's). Named, not imported: every room names these Protocols, so this module
imports no room, and the loader's is imported at the first ``from_checkpoint``."""


def _from_checkpoint(cls: type[Any], path: str | os.PathLike[str]) -> Any:
    """Return the module saved in folder ``path`` (RLlib's ``RLModule.from_checkpoint``).

    ``path`` is a module's folder in a checkpoint,
    ``<checkpoint>/learner_group/learner/rl_module/<module_id>``, or ``rl_module`` itself
    for all of them as a MultiRLModule (modules by id). hookbus's module classes are
    rebuilt from the file's data; a module of a class of your own is rebuilt by that
    class, ``MyModule.from_checkpoint(path)`` (a file never names code to import).
    ConfigError naming the path for anything else.
    """
    module_name, attribute = _LOADER
    load_module_checkpoint = getattr(importlib.import_module(module_name), attribute)
    module_class = None if cls in (RLModule, MultiRLModule) else cls
    module = load_module_checkpoint(path, module_class)
    if cls is MultiRLModule and not isinstance(module, Mapping):
        raise ConfigError(
            f"MultiRLModule.from_checkpoint({str(path)!r}): that folder holds one module; "
            f"give its parent (the checkpoint's rl_module folder), or use RLModule"
        )
    return module


# Set on the classes, not written in their bodies: a Protocol's members are what every
# module must have, and a module needs no from_checkpoint of its own.
RLModule.from_checkpoint = classmethod(_from_checkpoint)  # type: ignore[attr-defined]
MultiRLModule.from_checkpoint = classmethod(_from_checkpoint)  # type: ignore[attr-defined]


# Optional capabilities of an RLModule: SoftQ exploration needs one of them.


@runtime_checkable
class QValues(Protocol):
    """A module with Q-values (``DQNModule``)."""

    def q_values(self, obs: NDArray[Any], /) -> NDArray[Any]:
        """Return Q(obs, a) for every action: [B, n]."""
        ...


@runtime_checkable
class ActionDistInputs(Protocol):
    """A module with action logits (``PPOModule``)."""

    def action_dist_inputs(self, obs: NDArray[Any], /) -> NDArray[Any]:
        """Return the policy head's output (logits) for ``obs``."""
        ...
