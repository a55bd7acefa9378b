"""Envs registered by name: ``register_env(name, creator)``, and Ray Tune's registry too.

RLlib resolves a string env setting by asking Tune's registry first (``register_env``
lives in ``ray.tune.registry``) and only then gymnasium. hookbus keeps its own registry of
names (no Ray needed), and when Ray Tune is imported it also finds names registered with
``ray.tune.register_env``.

A registered name is resolved to a ``RegisteredEnv`` on the config (when the setting is
made, and again at ``build()``): the creator then travels with the env setting to worker
processes and Ray actors, which never need to have run ``register_env`` themselves.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

from hookbus.kernel import ConfigError

from ._context import EnvContext

__all__ = (
    "RegisteredEnv",
    "lookup_registered_env",
    "register_env",
    "registered_env_names",
    "resolve_registered_env",
)

_REGISTRY: dict[str, Callable[..., Any]] = {}

_T = TypeVar("_T")


class RegisteredEnv:
    """An env creator found under a registered name: called with the sub-env's EnvContext.

    It keeps the name, which is what messages, ``env_name()`` and reports show.
    """

    __slots__ = ("creator", "name")

    def __init__(self, name: str, creator: Callable[..., Any]) -> None:
        self.name = name
        self.creator = creator

    def __call__(self, env_context: EnvContext) -> Any:
        return self.creator(env_context)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RegisteredEnv):
            return (self.name, self.creator) == (other.name, other.creator)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"RegisteredEnv({self.name!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (RegisteredEnv, (self.name, self.creator))


def register_env(name: str, env_creator: Callable[..., Any]) -> None:
    """Register ``env_creator`` under ``name``, for ``config.environment(name)``.

    As RLlib's (``ray.tune.registry.register_env``): the creator is called with the
    sub-env's ``EnvContext`` (its ``env_config`` dict, with ``worker_index``,
    ``vector_index``, ...) and returns a gymnasium env. Registering a name again replaces
    the creator.
    """
    if not isinstance(name, str) or not name:
        raise ConfigError(f"register_env() needs a non-empty str name, got {name!r}")
    if not callable(env_creator):
        raise ConfigError(
            f"register_env({name!r}, ...) needs a callable env creator taking the EnvContext, "
            f"got {env_creator!r}"
        )
    _REGISTRY[name] = env_creator
    tune_registry = sys.modules.get("ray.tune.registry")
    if tune_registry is not None:  # Tune's registry is asked first: it must hold the newest
        tune_registry.register_env(name, env_creator)


def registered_env_names() -> list[str]:
    """Return the names registered with hookbus's ``register_env``, sorted."""
    return sorted(_REGISTRY)


def lookup_registered_env(name: str) -> RegisteredEnv | None:
    """Return the creator registered under ``name``, or None.

    Ray Tune's registry is asked first, then hookbus's: the newest registration wins either
    way, as ``register_env`` also writes into Tune's registry once Tune is imported (a name
    registered with hookbus before that is only in hookbus's).
    """
    creator = _tune_registered(name)
    if creator is None:
        creator = _REGISTRY.get(name)
    return None if creator is None else RegisteredEnv(name, creator)


def _tune_registered(name: str) -> Callable[..., Any] | None:
    # Only when Tune is already imported: whoever registered through it imported it, and
    # a Tune trial's process has it; importing Ray here would slow every hookbus import.
    registry = sys.modules.get("ray.tune.registry")
    if registry is None:
        return None
    kind = registry.ENV_CREATOR
    global_registry = registry._global_registry
    if not global_registry.contains(kind, name):
        return None
    creator: Callable[..., Any] = global_registry.get(kind, name)
    return creator


def resolve_registered_env(env: _T) -> _T | RegisteredEnv:
    """Return ``env``'s ``RegisteredEnv`` if it is a registered name, else ``env`` itself."""
    if isinstance(env, str):
        registered = lookup_registered_env(env)
        if registered is not None:
            return registered
    return env
