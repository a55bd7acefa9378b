"""Calling into a group's runners, RLlib's way: ``foreach_env_runner`` and its async and
deprecated forms, what they take (one function per runner, checked) and their keywords."""

from __future__ import annotations

import functools
import operator
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from hookbus.kernel import ConfigError

from .._deprecation import warn_deprecated
from .._loop import in_event_loop, run_sync
from ._faults import collect, within

if TYPE_CHECKING:
    from .._loop import LoopThread
    from ..backends import EnvRunnerHandle
    from ._async_calls import AsyncCalls
    from ._health import RunnerHealth

T = TypeVar("T")

__all__ = ("RunnerCalls", "RunnerFunction", "check_unsupported", "per_runner")

RunnerFunction: TypeAlias = Callable[..., Any] | str | Sequence[Callable[..., Any] | str]
"""A function of the runner, a method name, or a list of them (one per remote runner)."""


class RunnerCalls:
    """A group's calls into its runners (a base of ``EnvRunnerGroup``; it uses the names
    below): ``foreach_env_runner(fn)``, ``foreach_env(fn)`` and
    ``foreach_env_with_context(fn)`` are sync, as in RLlib (a script, a sync callback);
    ``aforeach_env_runner(fn)``, ... are their async twins for async code;
    ``foreach_env_runner_async(fn)`` sends and ``fetch_ready_async_reqs()`` collects later.
    """

    if TYPE_CHECKING:  # what EnvRunnerGroup holds
        health: RunnerHealth
        loop: LoopThread | None
        remote_env_runners: list[EnvRunnerHandle]
        _local: EnvRunnerHandle
        _async_calls: AsyncCalls

        async def _settle(
            self, runners: Sequence[EnvRunnerHandle], outcomes: Sequence[T | Exception]
        ) -> list[tuple[EnvRunnerHandle, T]]: ...

    # --- calling into the runners (RLlib's sync names, and async twins) ---------------------

    async def aforeach_env_runner(
        self,
        func: RunnerFunction,
        *,
        local_env_runner: bool = True,
        healthy_only: bool = True,
        remote_worker_ids: Sequence[int] | None = None,
        timeout_seconds: float | None = None,
        kwargs: dict[str, Any] | None = None,
        return_obj_refs: bool = False,
        mark_healthy: bool = False,
    ) -> list[Any]:
        """Call ``func(env_runner, **kwargs)`` on the runners; return the results, local first.

        RLlib's keywords (``foreach_env_runner``; docs/runners.md has the details):
        ``func`` is a function, a method name, or a list of functions, one per remote
        runner; ``remote_worker_ids`` picks remote runners by worker index;
        ``healthy_only=False`` also tries the failed ones (their errors are left out);
        ``timeout_seconds`` bounds each remote call (a runner that overruns it fails and
        its worker is ended). ``func`` runs where it may call the runner's sync API: a
        worker thread of this loop (in-process runners) or the worker process / actor; it
        must pickle (cloudpickle: lambdas and closures do) to reach a worker.
        """
        check_unsupported(return_obj_refs, mark_healthy, healthy_only, timeout_seconds)
        calls = self._runner_calls(func, local_env_runner, healthy_only, remote_worker_ids, kwargs)
        return await self._run_calls(calls, timeout_seconds, in_thread=True)

    def _runner_calls(
        self,
        func: RunnerFunction,
        local: bool,
        healthy_only: bool,
        remote_worker_ids: Sequence[int] | None,
        kwargs: dict[str, Any] | None,
    ) -> list[tuple[EnvRunnerHandle, Callable[[Any], Any]]]:
        remote = self._remote_targets(healthy_only, remote_worker_ids)
        functions = per_runner(func, kwargs, len(remote), local=local)
        runners = [self._local, *remote] if local else remote
        return list(zip(runners, functions, strict=True))

    def _remote_targets(
        self, healthy_only: bool, remote_worker_ids: Sequence[int] | None
    ) -> list[EnvRunnerHandle]:
        pool = self.health.healthy_remote_runners if healthy_only else self.remote_env_runners
        if remote_worker_ids is None:
            return list(pool)
        by_index = {runner.worker_index: runner for runner in self.remote_env_runners}
        unknown = [i for i in remote_worker_ids if i not in by_index]
        if unknown:
            raise ConfigError(
                f"remote_worker_ids={list(remote_worker_ids)!r}: no remote runner has worker "
                f"index {unknown!r}; the remote runners are {sorted(by_index)!r}"
            )
        return [by_index[i] for i in remote_worker_ids if by_index[i] in pool]

    async def _run_calls(
        self,
        calls: list[tuple[EnvRunnerHandle, Callable[[Any], Any]]],
        limit_s: float | None,
        *,
        in_thread: bool,
    ) -> list[Any]:
        healthy = set(map(id, self.health.healthy_remote_runners))

        def request(runner: EnvRunnerHandle, fn: Callable[[Any], Any]) -> Any:
            call = functools.partial(runner.apply, fn, in_thread=in_thread)
            what = "run foreach_env_runner's function"
            return functools.partial(
                within, runner, limit_s, call, what=what, setting="timeout_seconds"
            )

        # Failed runners (healthy_only=False) are tried; what they raise is left out.
        tried = [(r, fn) for r, fn in calls if r is self._local or id(r) in healthy or r.healthy]
        outcomes = await collect([request(r, fn) for r, fn in tried], one_by_one=not in_thread)
        kept = [
            (r, o)
            for (r, _), o in zip(tried, outcomes, strict=True)
            if r is self._local or id(r) in healthy or not isinstance(o, Exception)
        ]
        settled = await self._settle([r for r, _ in kept], [o for _, o in kept])
        return [result for _, result in settled]

    async def aforeach_env(self, fn: Callable[[Any], Any]) -> list[list[Any]]:
        """Call ``fn(sub_env)`` on every sub-env of every healthy runner; results per runner."""
        return await self._foreach(lambda r: functools.partial(r.foreach_env, fn), True)

    async def aforeach_env_with_context(self, fn: Callable[[Any, Any], Any]) -> list[list[Any]]:
        """Call ``fn(sub_env, env_context)`` on every sub-env of every healthy runner."""
        return await self._foreach(
            lambda r: functools.partial(r.foreach_env_with_context, fn), True
        )

    async def _foreach(
        self, request: Callable[[EnvRunnerHandle], Callable[[], Awaitable[T]]], local: bool
    ) -> list[T]:
        runners = self._targets(local)
        in_process = all(r.in_process for r in runners)  # then never suspend (sync callers)
        outcomes = await collect([request(r) for r in runners], one_by_one=in_process)
        return [result for _, result in await self._settle(runners, outcomes)]

    def foreach_env_runner(
        self,
        func: RunnerFunction,
        *,
        local_env_runner: bool = True,
        healthy_only: bool = True,
        remote_worker_ids: Sequence[int] | None = None,
        timeout_seconds: float | None = None,
        kwargs: dict[str, Any] | None = None,
        return_obj_refs: bool = False,
        mark_healthy: bool = False,
    ) -> list[Any]:
        """Sync twin of ``aforeach_env_runner()`` (RLlib's name and keywords).

        Works from scripts, sync callbacks and custom evaluation functions. On the event
        loop's own thread (a sync per-step handler) with only in-process runners targeted,
        ``func`` is called right there: it may then not call ``env_runner.sample()``.
        """
        check_unsupported(return_obj_refs, mark_healthy, healthy_only, timeout_seconds)
        calls = self._runner_calls(func, local_env_runner, healthy_only, remote_worker_ids, kwargs)
        twin = "env_runner_group.aforeach_env_runner(func)"
        on_loop = in_event_loop() and (self.loop is None or self.loop.on_its_thread())
        direct = on_loop and all(r.in_process for r, _ in calls)
        call = functools.partial(self._run_calls, calls, timeout_seconds, in_thread=not direct)
        return run_sync(self.loop, twin, call, may_wait=not direct)

    def foreach_env(self, fn: Callable[[Any], Any]) -> list[list[Any]]:
        """Sync twin of ``aforeach_env()``: works from scripts and sync callbacks."""
        return self._sync("env_runner_group.aforeach_env(fn)", self.aforeach_env, fn)

    def foreach_env_with_context(self, fn: Callable[[Any, Any], Any]) -> list[list[Any]]:
        """Sync twin of ``aforeach_env_with_context()``."""
        return self._sync(
            "env_runner_group.aforeach_env_with_context(fn)", self.aforeach_env_with_context, fn
        )

    def _targets(self, local: bool) -> list[EnvRunnerHandle]:
        healthy = self.health.healthy_remote_runners
        return [self._local, *healthy] if local else healthy

    def _sync(
        self, twin: str, call: Callable[..., Awaitable[T]], fn: Any, *, local: bool = True
    ) -> T:
        may_wait = any(not r.in_process for r in self._targets(local))
        return run_sync(self.loop, twin, call, fn, may_wait=may_wait)

    def foreach_env_runner_async(
        self,
        func: RunnerFunction,
        tag: str | None = None,
        *,
        kwargs: dict[str, Any] | None = None,
        healthy_only: bool = True,
        remote_worker_ids: Sequence[int] | None = None,
    ) -> int:
        """Start ``func(env_runner, **kwargs)`` on the remote runners and return at once
        with the number of calls started (RLlib's method and keywords).

        ``fetch_ready_async_reqs()`` collects the results. A runner with
        ``max_requests_in_flight_per_env_runner`` requests not yet fetched gets none
        (RLlib's rule). ``tag`` marks the calls for ``fetch_ready_async_reqs(tags=...)``.
        Needs the Algorithm's own event loop (an Algorithm built outside a loop).
        """
        requests = []
        for runner, fn in self._runner_calls(func, False, healthy_only, remote_worker_ids, kwargs):
            call = functools.partial(self._run_calls, [(runner, fn)], None, in_thread=True)
            requests.append((runner.worker_index, call))
        return self._async_calls.send(requests, tag)

    def fetch_ready_async_reqs(
        self,
        *,
        tags: str | Collection[str] | None = None,
        timeout_seconds: float | None = 0.0,
        return_obj_refs: bool = False,
        mark_healthy: bool = False,
    ) -> list[tuple[int, Any]]:
        """Return ``(worker_index, result)`` of the calls of ``foreach_env_runner_async()``
        that came back (with ``tags``; None: any), in the order they came.

        ``timeout_seconds`` (RLlib's default 0.0: what is there now) waits that long for
        the others, None until all came. A failed runner's call raises here, or is left
        out, as ``foreach_env_runner()``'s would. ``mark_healthy`` has no effect: a failed
        runner comes back by a restart (``algo.restore_env_runners(group)``).
        """
        check_unsupported(return_obj_refs, False, True, None)
        return self._async_calls.fetch(tags, timeout_seconds)

    def num_in_flight_async_reqs(self, tag: str | None = None) -> int:
        """Return how many ``foreach_env_runner_async()`` calls were not fetched yet."""
        return self._async_calls.in_flight(tag)

    # --- RLlib 2.40's deprecated names: they work and warn -----------------------------------

    def foreach_worker(self, func: RunnerFunction, **keywords: Any) -> list[Any]:
        """Deprecated in RLlib: ``foreach_env_runner()``, with the same keywords."""
        warn_deprecated("EnvRunnerGroup.foreach_worker", "EnvRunnerGroup.foreach_env_runner")
        return self.foreach_env_runner(func, **keywords)


def per_runner(
    func: RunnerFunction, kwargs: dict[str, Any] | None, remote: int, *, local: bool
) -> list[Callable[[Any], Any]]:
    """Return one ``fn(env_runner)`` per target: the local runner (if ``local``), then the
    ``remote`` remote runners. ``kwargs`` go to every call, as RLlib's remote calls get them.

    A method name calls that method (RLlib's ``func="get_metrics"``); a list gives each
    remote runner its own function, as RLlib's actor manager does, so it must have one per
    remote runner and the local runner must be left out.
    """
    extra = dict(kwargs or {})
    if isinstance(func, str) or not isinstance(func, Sequence):
        return [_bind(func, extra)] * (remote + int(local))
    functions = list(func)
    if local:
        raise ConfigError(
            "foreach_env_runner(func=[...]) gives one function per remote runner; the local "
            "runner has none: pass local_env_runner=False"
        )
    if len(functions) != remote:
        raise ConfigError(
            f"foreach_env_runner(func=[...]) got {len(functions)} functions for {remote} "
            f"remote runners; give one per runner (remote_worker_ids= picks the runners)"
        )
    return [_bind(f, extra) for f in functions]


def _bind(func: object, kwargs: dict[str, Any]) -> Callable[[Any], Any]:
    if isinstance(func, str):
        return operator.methodcaller(func, **kwargs)
    if not callable(func):
        raise ConfigError(
            f"foreach_env_runner(func={func!r}): expected a function of the runner, a method "
            f"name or a list of them"
        )
    return functools.partial(func, **kwargs) if kwargs else func


def check_unsupported(
    return_obj_refs: bool, mark_healthy: bool, healthy_only: bool, timeout_seconds: float | None
) -> None:
    """Refuse RLlib's options that have no meaning here, each with one error saying why."""
    if return_obj_refs:
        raise ConfigError(
            "foreach_env_runner(return_obj_refs=True): hookbus returns the results "
            "themselves, on every backend (Ray's ObjectRefs stay inside the Ray backend); "
            "leave return_obj_refs=False"
        )
    if mark_healthy and not healthy_only:
        raise ConfigError(
            "foreach_env_runner(mark_healthy=True, healthy_only=False): a failed runner "
            "comes back only by a restart; call algo.restore_env_runners(group) instead"
        )
    if timeout_seconds is not None and timeout_seconds <= 0:
        raise ConfigError(
            f"foreach_env_runner(timeout_seconds={timeout_seconds!r}): RLlib's "
            f"fire-and-forget (0.0) is not supported; give None (wait) or seconds > 0"
        )
