"""Make re-exported objects report the public module as theirs (for docs, reprs, pickles).

The one helper behind every public ``__init__`` (and ``events.codec``) of hookbus's packages
but ``metrics``: ``events`` is the package every other imports, so it lives here, and
``kernel`` and ``runners`` import it by its full name. ``metrics`` may import nothing of
ours (SPEC.md, Layout), so it keeps its own four-line loop.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ("publish_names",)


def publish_names(
    package: str, namespace: dict[str, Any], names: Iterable[str], *, home: str | None = None
) -> None:
    """Set ``__module__`` to ``package`` on the named objects of ``namespace`` that are
    defined in private modules below ``home`` (``package`` itself by default).

    Private modules anywhere below ``home`` count (``runners/algorithm/_algorithm.py``
    too); an object already reporting a public module (re-exported from a package that
    published it first) keeps it.
    """
    home = package if home is None else home
    for name in names:
        obj = namespace[name]
        module = getattr(obj, "__module__", "")
        if module.startswith(home + ".") and "._" in module[len(home) :]:
            obj.__module__ = package
