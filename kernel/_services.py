"""Named services: objects that plugins and callbacks share through their bus."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from typing import Any

from ._errors import ConfigError

__all__ = ("ServiceRegistry",)


class ServiceRegistry:
    """Hold a bus's named services: ``bus.services.provide("tracer", t)``, then ``get``.

    Plugins find each other here without importing each other (a plugin provides a client,
    another uses it), and an embedding service hands objects to its callbacks. Names are
    unique; the registry empties when the bus closes (closing the services stays with whoever
    provided them).
    """

    def __init__(self) -> None:
        self._services: dict[str, Any] = {}

    def provide(self, name: str, service: Any, *, replace: bool = False) -> None:
        """Register ``service`` as ``name``; an existing name needs ``replace=True``."""
        if not isinstance(name, str) or not name:
            raise ConfigError(f"a service name must be a non-empty str, got {name!r}")
        if name in self._services and not replace:
            raise ConfigError(
                f"a service named {name!r} is already provided "
                f"({self._services[name]!r}); pass replace=True to replace it"
            )
        self._services[name] = service

    def get(self, name: str, default: Any = ...) -> Any:
        """Return the service ``name``, or ``default``; without one, a missing name raises."""
        try:
            return self._services[name]
        except KeyError:
            if default is not ...:
                return default
            close = difflib.get_close_matches(name, self._services, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            known = ", ".join(map(repr, self._services)) or "none"
            raise ConfigError(f"no service named {name!r}{hint}; provided: {known}") from None

    def remove(self, name: str) -> Any:
        """Unregister the service ``name`` and return it."""
        self.get(name)  # raises the explanation if missing
        return self._services.pop(name)

    def clear(self) -> None:
        """Unregister every service."""
        self._services.clear()

    def __contains__(self, name: object) -> bool:
        return name in self._services

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._services))

    def __len__(self) -> int:
        return len(self._services)

    def __repr__(self) -> str:
        return f"<ServiceRegistry {sorted(self._services)}>"
