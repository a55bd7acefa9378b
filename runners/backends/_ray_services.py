"""Named services under Ray: the Algorithm's services live in Ray named actors.

Actors cannot call into the Algorithm's process, so while Ray runners use a bus, each
service provided on it moves into a Ray named actor (``ServiceActor``), and the registry
keeps a stand-in whose method calls run there (``ServiceProxy``): the Algorithm and every
actor then share one service, as RLlib's "global coordination" example shares a named
actor. Callbacks provided as services stay where they are (they run on the Algorithm's
bus) and are not reachable from actors. When the last Ray runner of the bus stops, each
service comes back into the registry as the object it became.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import sys
import uuid
from typing import Any

import ray
import ray.cloudpickle

from hookbus.kernel import Callback, ConfigError, ServiceRegistry

from ._services import Caller, ServiceProxy

__all__ = ("RayServices", "ServiceActor", "lookup")

logger = logging.getLogger("hookbus")


class ServiceActor:
    """Hold one service in a Ray actor and run its methods."""

    def __init__(self, payload: bytes, sys_path: list[str]) -> None:
        # The Algorithm's import path first, as for runner actors (_worker.Worker.init).
        sys.path[:] = [*sys_path, *(p for p in sys.path if p not in sys_path)]
        self._service = ray.cloudpickle.loads(payload)

    def call(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Return ``service.method(*args, **kwargs)`` (an async method is run to the end)."""
        value = getattr(self._service, method)(*args, **kwargs)
        if inspect.isawaitable(value):
            value = asyncio.run(_awaited(value))
        return value

    def unwrap(self) -> bytes:
        """Return the service as it is now, pickled."""
        return bytes(ray.cloudpickle.dumps(self._service))


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def _caller(handle: Any) -> Caller:
    def call(name: str, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        try:
            return ray.get(handle.call.remote(method, args, kwargs))
        except ray.exceptions.RayTaskError as exc:  # the service's own error, as itself
            cause = getattr(exc, "cause", None)
            raise (cause if isinstance(cause, Exception) else exc) from None

    return call


def lookup(prefix: str, name: str) -> ServiceProxy:
    """Find the service ``name`` of the Algorithm whose actors are named ``prefix...``."""
    try:
        handle = ray.get_actor(prefix + name)
    except ValueError:
        raise ConfigError(
            f"no service named {name!r} among the Algorithm's services (with Ray they live "
            f"in named actors; callbacks provided as services stay in the Algorithm's "
            f"process)"
        ) from None
    return ServiceProxy(name, _caller(handle), f"Ray actor {prefix + name!r}")


class RayServices:
    """Host one registry's services in Ray named actors while Ray runners use it."""

    def __init__(self, registry: ServiceRegistry) -> None:
        self.registry = registry
        self.prefix = f"hookbus-service-{uuid.uuid4().hex[:12]}:"
        """The names of this registry's service actors start with this."""
        self._actors: dict[str, Any] = {}
        self.users = 0  # Ray runners using it

    def attach(self) -> None:
        """Move the services provided so far into actors; host each one provided later."""
        self.registry.connect(host=self._host)
        for name in list(self.registry):
            self.registry.provide(name, self.registry.get(name), replace=True)

    def detach(self) -> None:
        """Bring every hosted service back into the registry; end their actors."""
        self.registry.connect()
        actors, self._actors = self._actors, {}
        for name, handle in actors.items():
            try:
                service = ray.cloudpickle.loads(ray.get(handle.unwrap.remote()))
            except ray.exceptions.RayError:
                continue  # its actor is gone: so is the service
            finally:
                ray.kill(handle)
            if isinstance(self.registry.get(name, None), ServiceProxy):
                self.registry.provide(name, service, replace=True)

    def _host(self, name: str, service: Any) -> Any:
        if isinstance(service, ServiceProxy | Callback):
            return service  # already elsewhere, or a callback: stays on the Algorithm's bus
        try:
            payload = bytes(ray.cloudpickle.dumps(service))
        except Exception as exc:
            logger.warning(
                "hookbus: service %r stays in the Algorithm's process, out of reach of Ray "
                "actors: it does not pickle (%s)",
                name,
                exc,
            )
            return service
        old = self._actors.pop(name, None)
        if old is not None:
            ray.kill(old)  # replaced
        actor = ray.remote(ServiceActor).options(name=self.prefix + name, num_cpus=0)
        handle = actor.remote(payload, list(sys.path))
        self._actors[name] = handle
        return ServiceProxy(name, _caller(handle), f"Ray actor {self.prefix + name!r}")
