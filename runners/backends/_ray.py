"""The ``"ray"`` backend: each remote EnvRunner a Ray actor (the optional extra ``hookbus[ray]``).

The actor serves the same typed messages as a worker process (``_wire``, ``_worker.Worker``),
one call each instead of a frame on a pipe, so events, metrics and errors come back exactly
as with ``"process"``. hookbus starts a local Ray (``ray.init()``) when none is initialised,
and otherwise uses the one the user initialised (``ray.init(address=...)``: a cluster).
This module is imported only when a config names the backend; it needs Ray.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
import ray
import ray.cloudpickle

from hookbus.kernel import Bus, ConfigError, ServiceRegistry

from ._injection import FAULT_PLAN_ENV, inject, read_plan
from ._ray_services import RayServices, lookup
from ._remote import RemoteEnvRunner, import_path
from ._wire import (
    Init,
    RemoteError,
    Reply,
    Request,
    Setup,
    Stop,
    decode_reply,
    decode_request,
    encode,
)
from ._worker import Worker

if TYPE_CHECKING:
    from ..config import AlgorithmConfig
    from ._base import EnvRunnerHandle

__all__ = (
    "CONNECT_TIMEOUT_ENV",
    "PLACEMENT_TIMEOUT_ENV",
    "RayEnvRunner",
    "RunnerActor",
    "ensure_ray",
)

_STOP_TIMEOUT_S = 10.0
_WATCH = "hookbus_watch"  # the concurrency group of RunnerActor.watch


_init_lock = threading.Lock()


CONNECT_TIMEOUT_ENV = "HOOKBUS_RAY_CONNECT_TIMEOUT_S"
"""How long joining the cluster ``RAY_ADDRESS`` names may take (seconds, default 30)."""


def ensure_ray() -> None:
    """Start a local Ray unless Ray is initialised (then the user's cluster serves).

    Without ``RAY_ADDRESS``, the local Ray is hookbus's own (``address="local"``): a
    cluster that an earlier ``ray start`` recorded on this machine, maybe long gone, is not
    joined. With ``RAY_ADDRESS`` (the user's choice of cluster), joining it may take
    ``HOOKBUS_RAY_CONNECT_TIMEOUT_S`` seconds (30) before one ConfigError names the address.

    Ray's own processes (GCS, raylet) end when the *thread* that started them ends (they
    get a parent-death signal), so a local Ray is started from a daemon thread that lives
    as long as this process, not from the short-lived thread that asks for it.
    """
    if ray.is_initialized():
        return
    with _init_lock:
        if ray.is_initialized():
            return
        address = os.environ.get("RAY_ADDRESS") or None
        if address is None and threading.current_thread() is threading.main_thread():
            ray.init(address="local")
            return
        started = threading.Event()
        errors: list[BaseException] = []

        def keep() -> None:
            try:
                ray.init(address=address or "local")
            except BaseException as exc:  # reported to the thread that asked
                errors.append(exc)
            finally:
                started.set()
            threading.Event().wait()  # never return: Ray's processes live while we do

        threading.Thread(target=keep, name="hookbus-ray", daemon=True).start()
        timeout = _connect_timeout() if address is not None else None
        if not started.wait(timeout) or (errors and address is not None):
            why = f"within {timeout:g} s ({CONNECT_TIMEOUT_ENV})" if not errors else errors[0]
            raise ConfigError(
                f"cannot reach the Ray cluster at {address!r} (RAY_ADDRESS): {why}; unset "
                f"RAY_ADDRESS to have hookbus start a local Ray, or call "
                f"ray.init(address=...) yourself before building"
            ) from (errors[0] if errors else None)
        if errors:
            raise errors[0]


PLACEMENT_TIMEOUT_ENV = "HOOKBUS_RAY_PLACEMENT_TIMEOUT_S"
"""How long a runner's actor may take to be placed and started (seconds, default 60)."""


def _connect_timeout() -> float:
    return _seconds(CONNECT_TIMEOUT_ENV, "30")


def _seconds(name: str, default: str) -> float:
    text = os.environ.get(name, default)
    try:
        timeout = float(text)
    except ValueError:
        timeout = -1.0
    if not 0 < timeout < float("inf"):
        raise ConfigError(f"{name} must be a number of seconds > 0, got {text!r}")
    return timeout


def _unplaced(config: AlgorithmConfig[Any], worker_index: int, timeout: float) -> ConfigError:
    """Name what a runner's actor asked for and what the cluster has (Ray's own view)."""
    each, runners = config.num_cpus_per_env_runner, config.num_env_runners
    total = ray.cluster_resources().get("CPU", 0.0)
    free = ray.available_resources().get("CPU", 0.0)
    return ConfigError(
        f"Ray did not place and start env runner {worker_index}'s actor within {timeout:g} s "
        f"({PLACEMENT_TIMEOUT_ENV}): the config asks for {runners} runners x {each:g} CPU "
        f"(num_cpus_per_env_runner) = {runners * each:g} CPUs, and the Ray cluster has "
        f"{total:g} CPUs, {free:g} of them free; lower num_env_runners or "
        f"num_cpus_per_env_runner, or give Ray more CPUs"
    )


class RunnerActor:
    """What runs in each actor: a ``Worker`` serving encoded requests, one at a time.

    ``services``: the name prefix of the Algorithm's service actors (``_ray_services``);
    ``fault_plan``: the driver's ``HOOKBUS_FAULT_PLAN``, for tests (``_injection``).
    """

    def __init__(self, services: str, fault_plan: str | None = None) -> None:
        self._worker = Worker(services=functools.partial(lookup, services))
        self._serve: Callable[[Request], Reply] = self._worker.serve
        self._send: Callable[[bytes], bytes] = bytes  # bytes(b) is b: no copy
        plan = read_plan(fault_plan)
        if plan:  # tests only: die at a named moment
            self._serve, self._send = inject(plan, self._serve, self._send)

    def handle(self, body: bytes) -> bytes:
        """Serve one encoded request; return the encoded reply (failures included)."""
        return self._send(encode(self._serve(decode_request(body))))

    def pid(self) -> int:
        """Return the actor's process id (for messages)."""
        return os.getpid()

    def watch(self) -> None:
        """Never return: the call fails when the actor dies (``RayEnvRunner.healthy``)."""
        threading.Event().wait()


_actor_class: Any = None


def _actor() -> Any:
    global _actor_class
    if _actor_class is None:  # one class for every actor: Ray exports it once
        _actor_class = ray.remote(concurrency_groups={_WATCH: 1})(RunnerActor)
    return _actor_class


class RayEnvRunner(RemoteEnvRunner):
    """Drive an EnvRunner living in a Ray actor, with the EnvRunner's API (async).

    The actor takes ``num_cpus_per_env_runner`` CPUs (RLlib's setting) and is never
    restarted by Ray: hookbus's fault tolerance restarts runners (a new actor), as with
    worker processes. The config and functions reach the actor by cloudpickle, so lambdas
    and objects of the main script cross too.
    """

    def __init__(
        self, config: AlgorithmConfig[Any], *, bus: Bus, worker_index: int, module: Any = None
    ) -> None:
        super().__init__(config, bus=bus, worker_index=worker_index, module=module)
        self._handle: Any = None  # the actor handle, None when there is no live actor
        self._watch: Any = None  # a call that fails when the actor dies
        self._lock: anyio.Lock | None = None
        self._name: str | None = None  # "ray actor, pid <pid>" of the last actor
        self._services: RayServices | None = None  # the bus's services, hosted in actors

    @property
    def healthy(self) -> bool:
        """Whether the actor is alive (not yet started, stopped, killed or died: False)."""
        if self._handle is None:
            return False
        done, _ = ray.wait([self._watch], timeout=0)
        return not done

    @property
    def where(self) -> str:
        """Name this runner and its actor, for messages."""
        if self._name is None:
            return f"env runner {self.worker_index} (ray actor not started)"
        ended = "" if self._handle is not None else ", ended"
        return f"env runner {self.worker_index} ({self._name}{ended})"

    def _dumps(self, obj: Any) -> bytes:
        return bytes(ray.cloudpickle.dumps(obj))

    # --- lifecycle --------------------------------------------------------------------------

    async def setup(self) -> None:
        """Start the actor, send it the config and module, publish its env's creation."""
        try:
            config, module = self._dumps(self.config), self._dumps(self.module)
        except Exception as exc:
            raise ConfigError(
                f"backend='ray' sends the config to actors with cloudpickle, which failed: {exc}"
            ) from exc
        await anyio.to_thread.run_sync(ensure_ray)
        self._restarted()
        if self._services is None:
            self._services = await anyio.to_thread.run_sync(_share_services, self.bus.services)
        prefix = self._services.prefix
        # max_restarts=0: hookbus's fault-tolerance settings decide restarts (a new actor).
        options = {"num_cpus": self.config.num_cpus_per_env_runner, "max_restarts": 0}
        handle = _actor().options(**options).remote(prefix, os.environ.get(FAULT_PLAN_ENV))
        self._handle, self._lock = handle, anyio.Lock()
        self._watch = handle.watch.options(concurrency_group=_WATCH).remote()
        self._name = "ray actor starting"
        timeout = _seconds(PLACEMENT_TIMEOUT_ENV, "60")
        with anyio.move_on_after(timeout):  # Ray waits for resources forever
            self._name = f"ray actor, pid {await self._get(handle.pid.remote())}"
        if self._name == "ray actor starting":
            self._handle = None
            _kill(handle)  # its request for resources ends with it
            raise await anyio.to_thread.run_sync(_unplaced, self.config, self.worker_index, timeout)
        init = Init(
            worker_index=self.worker_index,
            config=config,
            module=module,
            main_path=None,  # cloudpickle carries the main script's objects by value
            sys_path=import_path(),
            seqs=self._seqs,
        )
        await self._request(init)
        await self._request(Setup())

    async def kill(self) -> None:
        """End the actor at once (a hung env cannot be asked to stop)."""
        handle, self._handle = self._handle, None
        if handle is not None:
            _kill(handle)

    async def stop(self) -> None:
        """Ask the actor to close its env, then end it; the last one brings services back."""
        handle, self._handle = self._handle, None
        services, self._services = self._services, None
        try:
            if handle is not None:
                with anyio.move_on_after(_STOP_TIMEOUT_S):
                    await self._get(handle.handle.remote(encode(Stop())))
        except RemoteError:
            pass  # already gone
        finally:
            if handle is not None:
                _kill(handle)
            if services is not None:
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(_unshare_services, services)

    # --- calls ------------------------------------------------------------------------------

    async def _exchange(self, message: Request) -> Reply:
        handle, lock = self._handle, self._lock
        if handle is None or lock is None:
            raise RemoteError.lost(f"{self.where} is not running")
        async with lock:
            answered = False
            try:
                body: bytes = await self._get(handle.handle.remote(encode(message)))
                answered = True
            finally:
                if not answered:
                    # Cancelled (a timeout) or lost: this actor serves no further request.
                    if self._handle is handle:
                        self._handle = None
                    _kill(handle)
        return decode_reply(body)

    async def _get(self, ref: Awaitable[Any]) -> Any:
        """Wait for ``ref`` in a worker thread (anyio's, so trio works too)."""
        try:
            return await anyio.to_thread.run_sync(ray.get, ref, abandon_on_cancel=True)
        except ray.exceptions.RayError as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise RemoteError.lost(f"{self.where} died: {reason}") from exc


_shared: dict[int, RayServices] = {}  # id(registry) -> its services in actors, while used


def _share_services(registry: ServiceRegistry) -> RayServices:
    """Host ``registry``'s services in actors (once per registry); count one more user."""
    with _init_lock:
        services = _shared.get(id(registry))
        if services is None:
            services = _shared[id(registry)] = RayServices(registry)
            services.attach()
        services.users += 1
        return services


def _unshare_services(services: RayServices) -> None:
    """Count one user less; the last brings the services back into their registry."""
    with _init_lock:
        services.users -= 1
        if services.users:
            return
        del _shared[id(services.registry)]
    services.detach()


def _kill(handle: Any) -> None:
    try:
        ray.kill(handle, no_restart=True)
    except Exception:  # already dead, or Ray is shutting down: nothing left to end
        pass


if TYPE_CHECKING:  # mypy checks that the class keeps the backend contract
    _contract: type[EnvRunnerHandle] = RayEnvRunner
