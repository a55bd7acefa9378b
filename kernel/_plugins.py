"""Opt-in subscriber plugins: Callback classes named in the entry-point group hookbus.plugins."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._errors import ConfigError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = ("PLUGIN_GROUP", "available_plugins", "check_plugin_selection", "load_plugins")

PLUGIN_GROUP = "hookbus.plugins"


def available_plugins() -> dict[str, EntryPoint]:
    """Return the installed plugins by name, sorted by name."""
    # importlib.metadata costs ~20 ms to import (email, zipfile, ...): only when asked.
    from importlib.metadata import entry_points

    found = {ep.name: ep for ep in entry_points(group=PLUGIN_GROUP)}
    return dict(sorted(found.items()))


def check_plugin_selection(selection: object) -> list[str]:
    """Return the plugin names ``selection`` asks for, or raise ConfigError; import none."""
    if selection is False:
        return []
    found = available_plugins()
    if selection is True:
        return list(found)
    if isinstance(selection, str) or not isinstance(selection, Sequence):
        raise ConfigError(
            f"plugins must be True, False or a list of plugin names, got {selection!r}"
        )
    for name in selection:
        if name not in found:
            known = ", ".join(found) or "none are installed"
            raise ConfigError(f"unknown plugin {name!r}; installed plugins: {known}")
    return list(selection)


def load_plugins(selection: bool | Sequence[str]) -> list[type]:
    """Load the plugin classes ``selection`` asks for: all (True), none (False), or by name."""
    names = check_plugin_selection(selection)
    if not names:
        return []
    found = available_plugins()
    classes = []
    for name in names:
        try:
            cls = found[name].load()
        except Exception as exc:
            raise ConfigError(
                f"plugin {name!r} ({found[name].value}) failed to load: {exc!r}"
            ) from exc
        if not isinstance(cls, type):
            raise ConfigError(
                f"plugin {name!r} ({found[name].value}) must name a Callback class, got {cls!r}"
            )
        classes.append(cls)
    return classes
