"""Runner backends: where EnvRunners run, behind one contract (``_base.EnvRunnerHandle``).

``BACKENDS`` maps the name given to ``config.env_runners(backend=...)`` to the handle class
implementing it, as ``"module:Class"``; ``load_backend(name)`` imports it on first use, so
an optional backend costs nothing when unused. Adding a backend: a module in this folder
and one line here. This module imports no runner code, so the config can check names
without importing the backends.
"""

from __future__ import annotations

import importlib
from typing import Any

from hookbus.kernel import ConfigError

__all__ = ("BACKENDS", "check_backend", "load_backend")

BACKENDS: dict[str, str] = {
    "inline": "hookbus.runners.backends._inline:InlineEnvRunner",
    "process": "hookbus.runners.backends._process:ProcessEnvRunner",
}
"""Backend name -> ``"module:Class"`` of its ``EnvRunnerHandle`` implementation."""

_PLANNED = {"ray": "the Ray actor backend is not in this release; use 'inline' or 'process'"}


def check_backend(name: object) -> None:
    """Raise ConfigError unless ``name`` is a known backend."""
    if isinstance(name, str) and name in BACKENDS:
        return
    planned = _PLANNED.get(name) if isinstance(name, str) else None
    if planned is not None:
        raise ConfigError(f"backend {name!r}: {planned}")
    raise ConfigError(f"unknown backend {name!r}; allowed: {', '.join(map(repr, BACKENDS))}")


def load_backend(name: str) -> Any:
    """Import and return the handle class of backend ``name`` (a ``HandleFactory``)."""
    check_backend(name)
    module_name, _, attribute = BACKENDS[name].partition(":")
    return getattr(importlib.import_module(module_name), attribute)
