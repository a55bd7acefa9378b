"""Make re-exported objects report the public package as their module (for docs, reprs)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ("publish_names",)


def publish_names(package: str, namespace: dict[str, Any], names: Iterable[str]) -> None:
    """Set ``__module__`` to ``package`` on the named objects defined in its private modules."""
    for name in names:
        obj = namespace[name]
        module = getattr(obj, "__module__", "")
        # Private modules anywhere below the package (runners/backends/_group.py too).
        if module.startswith(package + ".") and "._" in module[len(package) :]:
            obj.__module__ = package
