"""Names a package exports but imports on first use (a module ``__getattr__``, PEP 562).

The Algorithm family is loaded this way (defining an Algorithm class imports Ray Tune when
it is installed: ``algorithm/_tune.py``), and so is the backends' contract (importing it
at once would make the config import the runners). The names and their modules are fixed
tables in our own code: nothing a file or a caller says chooses what is imported.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

from hookbus.events._public import publish_names

__all__ = ("on_first_use",)


def on_first_use(
    package: str, names: Mapping[str, tuple[str, str]], *, publish: bool = False
) -> Callable[[str], Any]:
    """Return ``package``'s ``__getattr__``: ``names[name]`` is ``(module, attribute)``,
    the module relative to ``package``; the value is imported once, then kept in the
    package's namespace, where later lookups find it without this function.

    ``publish``: an object defined in a private module below ``package`` reports
    ``package`` as its module from then on (``events._public.publish_names``), as an eager
    package's re-exports do.
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
