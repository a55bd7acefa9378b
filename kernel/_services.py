"""Named services: objects that plugins and callbacks share through their bus."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from typing import Any

from ._errors import ConfigError

__all__ = ("ServiceRegistry",)


class ServiceRegistry:
    """Hold a bus's named services: ``bus.services.provide("tracer", t)``, then ``get``.

    Plugins find each other here without importing each other (a plugin provides a client,
    another uses it), and an embedding service hands objects to its callbacks. Names are
    unique; the registry empties when the bus closes (closing the services stays with whoever
    provided them).

    Runner backends ``connect`` registries across processes: a worker's registry looks up
    the names it lacks in the Algorithm's (``lookup``), and the Ray backend moves the
    Algorithm's services into Ray actors (``host``). Either way ``get`` returns an object
    whose method calls run on the service and return their results.
    """

    def __init__(self) -> None:
        self._services: dict[str, Any] = {}
        self._lookup: Callable[[str], Any] | None = None
        self._host: Callable[[str, Any], Any] | None = None
        self._found: dict[str, Any] = {}  # what lookup found, asked once per name

    def connect(
        self,
        *,
        lookup: Callable[[str], Any] | None = None,
        host: Callable[[str, Any], Any] | None = None,
    ) -> None:
        """Let services live elsewhere (runner backends do this; None undoes it).

        ``lookup(name)`` is asked for a name not provided here and returns a stand-in for
        the service (or raises ConfigError). ``host(name, service)`` receives every service
        provided from now on and returns what is kept in its place.
        """
        self._lookup, self._host = lookup, host
        self._found.clear()

    def provide(self, name: str, service: Any, *, replace: bool = False) -> None:
        """Register ``service`` as ``name``; an existing name needs ``replace=True``."""
        if not isinstance(name, str) or not name:
            raise ConfigError(f"a service name must be a non-empty str, got {name!r}")
        if name in self._services and not replace:
            raise ConfigError(
                f"a service named {name!r} is already provided "
                f"({self._services[name]!r}); pass replace=True to replace it"
            )
        if self._host is not None:
            service = self._host(name, service)
        self._services[name] = service

    def get(self, name: str, default: Any = ...) -> Any:
        """Return the service ``name``, or ``default``; without one, a missing name raises."""
        try:
            return self._services[name]
        except KeyError:
            pass
        if self._lookup is not None:
            if name not in self._found:
                try:
                    self._found[name] = self._lookup(name)
                except ConfigError:
                    if default is not ...:
                        return default
                    raise
            return self._found[name]
        if default is not ...:
            return default
        raise self._missing(name)

    def _missing(self, name: str) -> ConfigError:
        close = difflib.get_close_matches(name, self._services, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        known = ", ".join(map(repr, self._services)) or "none"
        return ConfigError(f"no service named {name!r}{hint}; provided: {known}")

    def remove(self, name: str) -> Any:
        """Unregister the service ``name`` and return it."""
        if name not in self._services:
            raise self._missing(name)
        return self._services.pop(name)

    def clear(self) -> None:
        """Unregister every service."""
        self._services.clear()
        self._found.clear()

    def __contains__(self, name: object) -> bool:
        return name in self._services

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._services))

    def __len__(self) -> int:
        return len(self._services)

    def __repr__(self) -> str:
        return f"<ServiceRegistry {sorted(self._services)}>"
