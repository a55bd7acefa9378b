"""Runner backends: where EnvRunners run, behind one contract (``_base.EnvRunnerHandle``).

``BACKENDS`` maps the name given to ``config.env_runners(backend=...)`` to the handle class
implementing it, as ``"module:Class"``; ``load_backend(name)`` imports it on first use, so
an optional backend costs nothing when unused. Adding a backend: a module in this folder
and one line in ``BACKENDS``, which the config holds (``config/_backend_names.py``): the
config checks names without importing the backends, and this room, above it, takes the
table from there.

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

from ..config import BACKENDS as BACKENDS, check_backend as check_backend

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

__getattr__ = _on_first_use(__name__, _CONTRACT)


def load_backend(name: str) -> Any:
    """Import and return the handle class of backend ``name`` (a ``HandleFactory``)."""
    check_backend(name)
    module_name, _, attribute = BACKENDS[name].partition(":")
    return getattr(importlib.import_module(module_name), attribute)


def reach_save_phase(phase: str) -> None:
    """Mark that a checkpoint save reached ``phase``; a test's fault plan may kill it there.

    The checkpoint writer's door to ``_injection``, imported at the call (saves are rare):
    at the top it would load the wire and the EnvRunner with this door.
    """
    from ._injection import reach_save_phase as reach

    reach(phase)
