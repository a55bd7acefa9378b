"""Make re-exported objects report the public package as their module (for docs, reprs)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ("publish_names",)


def publish_names(package: str, namespace: dict[str, Any], names: Iterable[str]) -> None:
    """Set ``__module__`` to ``package`` on the named objects defined in its private modules."""
    for name in names:
        obj = namespace[name]
        if getattr(obj, "__module__", "").startswith(package + "._"):
            obj.__module__ = package
