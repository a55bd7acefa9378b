"""How a package shows its public names: under its own module, and loaded on first use.

The two helpers behind every public ``__init__`` (and ``events.codec``) of hookbus's
packages but ``metrics``: ``events`` is the package every other imports, so they live here,
exported by ``hookbus.events`` for the others (and for a plugin's package) to import.
``metrics`` may import nothing of ours (SPEC.md, Layout), so it keeps its own four-line loop.

- ``publish_names``: a re-exported object reports the package as its module (for docs,
  reprs and pickles), not the private module that defines it.
- ``on_first_use``: a package's ``__getattr__`` (PEP 562) importing each name from a fixed
  table when first asked for, so that importing the package loads none of them. The
  runners' names load this way (an Algorithm class imports Ray Tune when it is installed:
  ``runners/algorithm/_tune.py``), and so do the backends' contract and the bridges. The
  tables are in our own code: nothing a file or a caller says chooses what is imported.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ("on_first_use", "publish_names")


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


def on_first_use(
    package: str, names: Mapping[str, tuple[str, str]], *, publish: bool = False
) -> Callable[[str], Any]:
    """Return ``package``'s ``__getattr__``: ``names[name]`` is ``(module, attribute)``,
    the module relative to ``package``; the value is imported once, then kept in the
    package's namespace, where later lookups find it without this function.

    ``publish``: an object defined in a private module below ``package`` reports
    ``package`` as its module from then on (``publish_names``), as an eager package's
    re-exports do.
    """
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        try:
            module, attribute = names[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(module, package), attribute)
        namespace[name] = value
        if publish:
            publish_names(package, namespace, [name])
        return value

    return __getattr__
