"""The algorithms by name: ``get_trainable_cls("PPO")``, as RLlib's Tune registry answers,
and ``PPOConfig.algo_class``.

Each name maps to the module that defines its class, imported on first use: defining an
Algorithm class imports Ray Tune when it is installed (``algorithm/_tune.py`` says why),
which configs, EnvRunners and worker processes never need.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from hookbus.kernel import ConfigError

if TYPE_CHECKING:
    from ..algorithm import Algorithm

__all__ = ("ALGORITHMS", "AlgorithmClass", "get_trainable_cls")

_MODULES = {
    "PPO": "hookbus.runners.algorithms.ppo._algorithm",
    "DQN": "hookbus.runners.algorithms.dqn._algorithm",
}


def _load(name: str) -> type[Algorithm]:
    algorithm: type[Algorithm] = getattr(importlib.import_module(_MODULES[name]), name)
    return algorithm


class _Algorithms(Mapping[str, "type[Algorithm]"]):
    """hookbus's algorithm classes by name, each imported on first lookup."""

    def __getitem__(self, name: str) -> type[Algorithm]:
        if name not in _MODULES:
            raise KeyError(name)
        return _load(name)

    def __iter__(self) -> Iterator[str]:
        return iter(_MODULES)

    def __len__(self) -> int:
        return len(_MODULES)


ALGORITHMS: Mapping[str, type[Algorithm]] = _Algorithms()
"""hookbus's algorithms by name."""


class AlgorithmClass:
    """A config's ``algo_class``: hookbus's algorithm ``name``, imported when read.

    ``PPOConfig.algo_class`` and ``config.algo_class`` both give the ``PPO`` class.
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, instance: object, owner: type | None = None) -> type[Algorithm]:
        return _load(self.name)


def get_trainable_cls(name: str) -> type[Any]:
    """Return the Algorithm class called ``name`` ("PPO", "DQN"), as RLlib's does.

    ``get_trainable_cls("PPO").get_default_config()`` is a ``PPOConfig``. When Ray Tune is
    imported, a name registered with ``tune.register_trainable`` is found too.
    """
    if isinstance(name, str) and name in _MODULES:
        return _load(name)
    registry = sys.modules.get("ray.tune.registry")
    if registry is not None and isinstance(name, str):
        registered = registry._global_registry
        if registered.contains(registry.TRAINABLE_CLASS, name):
            trainable: type[Any] = registered.get(registry.TRAINABLE_CLASS, name)
            return trainable
    raise ConfigError(
        f"unknown algorithm {name!r}; hookbus has {', '.join(sorted(_MODULES))} "
        f"(or a name registered with ray.tune.register_trainable)"
    )
