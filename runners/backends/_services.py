"""Named services across processes: stand-ins whose method calls run where the service lives.

``bus.services`` of the Algorithm is the one registry. A worker process's registry looks up
the names it lacks there: it asks up its pipe in the middle of a request (``ServiceCall``),
the Algorithm runs the call on its event loop and answers (``ServiceResult``), and the
request goes on (``PipeServices`` in the worker, ``serve`` in the Algorithm). With Ray the
services move into Ray named actors instead (``_ray_services``). Either way a runner's
callback writes ``env_runner.bus.services.get("counter").inc(1)`` and gets the result.
"""

from __future__ import annotations

import inspect
import pickle
from collections.abc import Callable
from typing import Any, BinaryIO

from hookbus.kernel import ServiceRegistry

from ._wire import (
    RemoteError,
    ServiceCall,
    ServiceResult,
    error_from_wire,
    error_to_wire,
    frame,
    read_frame_sync,
)

__all__ = ("PipeServices", "ServiceProxy", "serve")

Caller = Callable[[str, str, tuple[Any, ...], dict[str, Any]], Any]


class ServiceProxy:
    """Stand in for the service ``name`` living elsewhere: ``proxy.method(*args)`` runs there.

    Only method calls cross (arguments and results by pickle); attributes do not.
    """

    def __init__(self, name: str, call: Caller, where: str) -> None:
        self._name, self._call, self._where = name, call, where

    def __getattr__(self, method: str) -> Callable[..., Any]:
        if method.startswith("_"):
            raise AttributeError(method)

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._call(self._name, method, args, kwargs)

        call.__name__ = method
        return call

    def __repr__(self) -> str:
        return f"<service {self._name!r} in {self._where}>"


async def serve(services: ServiceRegistry, call: ServiceCall) -> ServiceResult:
    """Run a worker's ``ServiceCall`` on ``services`` (the Algorithm's); never raises."""
    try:
        service = services.get(call.name)
        value = None
        if call.method is not None:
            args, kwargs = pickle.loads(call.payload)
            value = getattr(service, call.method)(*args, **kwargs)
            if inspect.isawaitable(value):  # an async method: awaited on the event loop
                value = await value
        return ServiceResult(value=pickle.dumps(value))
    except Exception as exc:
        return ServiceResult(error=error_to_wire(exc))


class PipeServices:
    """A worker process's way to the Algorithm's services: calls up its own pipe.

    Used while the worker serves a request (callbacks and envs run only then), when the
    Algorithm is reading this worker's replies and can answer.
    """

    def __init__(self, requests: BinaryIO, replies: BinaryIO) -> None:
        self._requests, self._replies = requests, replies

    def lookup(self, name: str) -> ServiceProxy:
        """Return a stand-in for the Algorithm's service ``name`` (ConfigError if none)."""
        self._ask(ServiceCall(name=name))
        return ServiceProxy(name, self.call, "the Algorithm's process")

    def call(self, name: str, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run ``service.method(*args, **kwargs)`` in the Algorithm's process; return it."""
        payload = pickle.dumps((args, kwargs))
        return self._ask(ServiceCall(name=name, method=method, payload=payload))

    def _ask(self, call: ServiceCall) -> Any:
        self._replies.write(frame(call))
        self._replies.flush()
        answer = read_frame_sync(self._requests)
        if not isinstance(answer, ServiceResult):
            raise RemoteError(f"the Algorithm answered a service call with {answer!r}")
        if answer.error is not None:
            raise error_from_wire(answer.error, "the Algorithm's process")
        return None if answer.value is None else pickle.loads(answer.value)
