"""Runner backends: where EnvRunners run, behind one contract (``_base.EnvRunnerHandle``).

``BACKENDS`` maps the name given to ``config.env_runners(backend=...)`` to the handle class
implementing it, as ``"module:Class"``; ``load_backend(name)`` imports it on first use, so
an optional backend costs nothing when unused. Adding a backend: a module in this folder
and one line here. This module imports no runner code, so the config can check names
without importing the backends.

The contract other rooms use (the fleet, evaluation) is exported here too, and loaded on
first use for the same reason: ``EnvRunnerHandle`` and ``HandleFactory``; ``RemoteError``,
what a lost worker raises; ``failure_key`` and ``describe_failure``, telling failures alike
and naming where one was raised; ``inline_handle`` and ``share_loop`` for the runner in
this process.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from hookbus.events import on_first_use as _on_first_use
from hookbus.kernel import ConfigError

if TYPE_CHECKING:
    from ._base import EnvRunnerHandle as EnvRunnerHandle, HandleFactory as HandleFactory
    from ._inline import inline_handle as inline_handle, share_loop as share_loop
    from ._origin import describe as describe_failure, failure_key as failure_key
    from ._wire import RemoteError as RemoteError

__all__ = (
    "BACKENDS",
    "EnvRunnerHandle",
    "HandleFactory",
    "RemoteError",
    "check_backend",
    "describe_failure",
    "failure_key",
    "inline_handle",
    "load_backend",
    "reach_save_phase",
    "share_loop",
)

BACKENDS: dict[str, str] = {
    "inline": "hookbus.runners.backends._inline:InlineEnvRunner",
    "process": "hookbus.runners.backends._process:ProcessEnvRunner",
    "ray": "hookbus.runners.backends._ray:RayEnvRunner",
}
"""Backend name -> ``"module:Class"`` of its ``EnvRunnerHandle`` implementation."""

# The contract, public name -> (module, name there): imported when first asked for.
_CONTRACT = {
    "EnvRunnerHandle": ("._base", "EnvRunnerHandle"),
    "HandleFactory": ("._base", "HandleFactory"),
    "RemoteError": ("._wire", "RemoteError"),
    "describe_failure": ("._origin", "describe"),
    "failure_key": ("._origin", "failure_key"),
    "inline_handle": ("._inline", "inline_handle"),
    "share_loop": ("._inline", "share_loop"),
}

# Backends that need an optional distribution: (its import name, the extra that installs it).
_NEEDS = {"ray": ("ray", "hookbus[ray]")}


def check_backend(name: object) -> None:
    """Raise ConfigError unless ``name`` is a known backend whose requirements are installed."""
    if not (isinstance(name, str) and name in BACKENDS):
        allowed = ", ".join(map(repr, BACKENDS))
        raise ConfigError(f"unknown backend {name!r}; allowed: {allowed}")
    needed = _NEEDS.get(name)
    if needed is not None:
        module, extra = needed
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise ConfigError(
                f"backend {name!r} needs {module!r}, which is not installed: pip install {extra!r}"
            ) from exc


__getattr__ = _on_first_use(__name__, _CONTRACT)


def load_backend(name: str) -> Any:
    """Import and return the handle class of backend ``name`` (a ``HandleFactory``)."""
    check_backend(name)
    module_name, _, attribute = BACKENDS[name].partition(":")
    return getattr(importlib.import_module(module_name), attribute)


def reach_save_phase(phase: str) -> None:
    """Mark that a checkpoint save reached ``phase``; a test's fault plan may kill it there.

    The checkpoint writer's door to ``_injection``, imported at the call (saves are rare):
    an import at the top would bring runner code into this module, and a circle with it.
    """
    from ._injection import reach_save_phase as reach

    reach(phase)
