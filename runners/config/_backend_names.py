"""The backends a config may name: each name's handle class, by name, and what it needs.

``env_runners(backend=...)`` is checked here, against names only: the config imports no
runner code, and the backends room (``backends/``, above the config) imports each class
named here on first use (``backends.load_backend``). Adding a backend: a module in
``backends/`` and one line in ``BACKENDS``.
"""

from __future__ import annotations

import importlib

from hookbus.kernel import ConfigError

__all__ = ("BACKENDS", "check_backend")

BACKENDS: dict[str, str] = {
    "inline": "hookbus.runners.backends._inline:InlineEnvRunner",
    "process": "hookbus.runners.backends._process:ProcessEnvRunner",
    "ray": "hookbus.runners.backends._ray:RayEnvRunner",
}
"""Backend name -> ``"module:Class"`` of its ``EnvRunnerHandle`` implementation."""

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
