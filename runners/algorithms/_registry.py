"""The algorithms by name: ``get_trainable_cls("PPO")``, as RLlib's Tune registry answers."""

from __future__ import annotations

import sys
from typing import Any

from hookbus.kernel import ConfigError

from ..algorithm import Algorithm
from .dqn import DQN
from .ppo import PPO

__all__ = ("ALGORITHMS", "get_trainable_cls")

ALGORITHMS: dict[str, type[Algorithm]] = {"PPO": PPO, "DQN": DQN}
"""hookbus's algorithms by name."""


def get_trainable_cls(name: str) -> type[Any]:
    """Return the Algorithm class called ``name`` ("PPO", "DQN"), as RLlib's does.

    ``get_trainable_cls("PPO").get_default_config()`` is a ``PPOConfig``. When Ray Tune is
    imported, a name registered with ``tune.register_trainable`` is found too.
    """
    found = ALGORITHMS.get(name) if isinstance(name, str) else None
    if found is not None:
        return found
    registry = sys.modules.get("ray.tune.registry")
    if registry is not None and isinstance(name, str):
        registered = registry._global_registry
        if registered.contains(registry.TRAINABLE_CLASS, name):
            trainable: type[Any] = registered.get(registry.TRAINABLE_CLASS, name)
            return trainable
    raise ConfigError(
        f"unknown algorithm {name!r}; hookbus has {', '.join(sorted(ALGORITHMS))} "
        f"(or a name registered with ray.tune.register_trainable)"
    )
