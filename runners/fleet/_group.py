"""EnvRunnerGroup: the local runner and the remote ones, sampled together."""

from __future__ import annotations

import functools
import logging
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from hookbus.kernel import Bus, ConfigError, Control, Episode, Publisher

from .._deprecation import warn_deprecated
from .._loop import LoopThread, in_event_loop, run_sync
from ..backends import load_backend
from ..backends._base import EnvRunnerHandle
from ..backends._inline import InlineEnvRunner
from ..env_runner import EnvRunner, SampleRequest, env_runner_class
from ._calls import RunnerFunction, check_unsupported, per_runner
from ._faults import collect, gather, is_runner_failure, within
from ._health import RunnerHealth

if TYPE_CHECKING:
    from ..config import AlgorithmConfig

__all__ = ("EnvRunnerGroup",)

T = TypeVar("T")

logger = logging.getLogger("hookbus")


class EnvRunnerGroup:
    """Hold ``local_env_runner`` (index 0) and ``num_env_runners`` remote runners (1..N).

    As in RLlib, the remote runners sample when there are any; otherwise the local one does.
    The remote runners are handles of the config's backend (``backends.BACKENDS``): tasks
    in this event loop (``"inline"``) or worker processes (``"process"``); the group uses
    only the contract (``backends/_base.py``).

    A remote runner whose worker died or hung, or whose env raised, is *failed* (``health``,
    a ``RunnerHealth``; ``_faults``): the group's methods leave it out until
    ``restore_env_runners()`` restarts it, as the config's fault-tolerance settings allow
    (``sample()`` restarts runners itself when none is left). Requests to several runners
    run each in its own task; one runner's failure never cancels another's request.
    ``publisher`` (the Algorithm's) announces restarts with ``on_env_runners_recreated``.

    ``foreach_env(fn)``, ``foreach_env_with_context(fn)`` and ``foreach_env_runner(fn)`` are
    sync, as in RLlib (a script, a sync callback); ``aforeach_env(fn)``, ... are their
    async twins for async code.
    """

    def __init__(
        self,
        config: AlgorithmConfig[Any],
        *,
        bus: Bus,
        module: Any = None,
        loop: LoopThread | None = None,
        publisher: Publisher | None = None,
    ) -> None:
        self.config = config
        self.local_env_runner = env_runner_class(config)(
            config, bus=bus, module=module, worker_index=0
        )
        """The local EnvRunner (it samples when there are no remote runners)."""
        self._local = InlineEnvRunner.wrapping(self.local_env_runner)
        make = load_backend(config.backend)
        self.remote_env_runners: list[EnvRunnerHandle] = [
            make(config, bus=bus, worker_index=index, module=module)
            for index in range(1, config.num_env_runners + 1)
        ]
        """The remote runners' handles (``backends/_base.py``), worker index 1..N."""
        self.health = RunnerHealth(config, self.remote_env_runners, publisher=publisher, group=self)
        """Failing, counting and restarting the remote runners (``config.fault_tolerance()``)."""
        self.loop = loop
        """The event loop thread that sync calls go to (None: the caller's loop)."""
        for runner in [self.local_env_runner, *self.remote_env_runners]:
            if isinstance(runner, InlineEnvRunner):
                runner.env_runner.loop = loop
            elif isinstance(runner, EnvRunner):
                runner.loop = loop

    @property
    def sampling_runners(self) -> Sequence[EnvRunnerHandle]:
        """The runners that sample: the remote ones in service, or the local one alone.

        As in RLlib, the local runner samples only when there are no remote runners; when
        every remote runner failed, none samples until some are restarted. A remote runner
        whose worker died unnoticed is still in service: its next request finds out, and the
        failure is handled as the fault-tolerance settings say.
        """
        if not self.remote_env_runners:
            return [self._local]
        return self.health.in_service(self.remote_env_runners)

    # --- health, RLlib's names (``health`` does the work) ----------------------------------

    @property
    def healthy_remote_runners(self) -> list[EnvRunnerHandle]:
        """The remote runners that have not failed and whose worker is there."""
        return self.health.healthy_remote_runners

    def healthy_env_runner_ids(self) -> list[int]:
        """Return the worker indices of the healthy remote runners."""
        return self.health.healthy_env_runner_ids()

    def num_healthy_remote_workers(self) -> int:
        """Return how many remote runners are healthy."""
        return self.health.num_healthy_remote_workers()

    def num_remote_worker_restarts(self) -> int:
        """Return how many restarts of failed remote runners were tried in all."""
        return self.health.num_remote_worker_restarts()

    async def restore_env_runners(self, weights: dict[str, Any]) -> list[int]:
        """Restart the failed runners the fault-tolerance settings allow; return their indices."""
        return await self.health.restore_env_runners(weights)

    async def restore_and_announce(self, weights: dict[str, Any]) -> list[int]:
        """Restart what ``restore_env_runners()`` may; publish ``on_env_runners_recreated``."""
        return await self.health.restore_and_announce(weights)

    @property
    def num_env_runners(self) -> int:
        """How many remote runners there are."""
        return len(self.remote_env_runners)

    def num_remote_env_runners(self) -> int:
        """Return how many remote runners there are (RLlib's name)."""
        return len(self.remote_env_runners)

    # --- RLlib 2.40's deprecated names: they work and warn -----------------------------------

    def foreach_worker(self, func: RunnerFunction, **keywords: Any) -> list[Any]:
        """Deprecated in RLlib: ``foreach_env_runner()``, with the same keywords."""
        warn_deprecated("EnvRunnerGroup.foreach_worker", "EnvRunnerGroup.foreach_env_runner")
        return self.foreach_env_runner(func, **keywords)

    def healthy_worker_ids(self) -> list[int]:
        """Deprecated in RLlib: ``healthy_env_runner_ids()``."""
        warn_deprecated(
            "EnvRunnerGroup.healthy_worker_ids", "EnvRunnerGroup.healthy_env_runner_ids"
        )
        return self.healthy_env_runner_ids()

    def num_remote_workers(self) -> int:
        """Deprecated in RLlib: ``num_remote_env_runners()``."""
        warn_deprecated(
            "EnvRunnerGroup.num_remote_workers", "EnvRunnerGroup.num_remote_env_runners"
        )
        return self.num_remote_env_runners()

    async def _settle(
        self, runners: Sequence[EnvRunnerHandle], outcomes: Sequence[T | Exception]
    ) -> list[tuple[EnvRunnerHandle, T]]:
        """Handle the failures among ``outcomes``; return the runners' results that came.

        Failed remote runners are taken out of service; an error that is no runner failure
        (a handler's), a failure the settings do not tolerate, or the local runner's error
        is raised once every outcome was handled (the first, the others in a note).
        """
        results = [
            (runner, outcome)
            for runner, outcome in zip(runners, outcomes, strict=True)
            if not isinstance(outcome, Exception)
        ]
        errors: list[Exception] = []
        for runner, outcome in zip(runners, outcomes, strict=True):
            if not isinstance(outcome, Exception):
                continue
            if runner is self._local or not is_runner_failure(outcome):
                errors.append(outcome)
            elif not await self.health.fail(runner, outcome):
                errors.append(outcome)
        if errors:
            first, *others = errors
            if others:
                first.add_note(
                    f"hookbus: {len(others)} more failed as well: "
                    + "; ".join(f"{type(exc).__name__}: {exc}" for exc in others)
                )
            raise first
        return results

    def set_module(self, module: Any) -> None:
        """Give every runner without a module the learner's ``module``.

        In-process runners share it; worker processes get a copy when they start.
        """
        for runner in [self._local, *self.remote_env_runners]:
            if runner.module is None:
                runner.module = module

    def take_control(self) -> Control | None:
        """Return what every runner's handlers asked for (``Control``) since last time.

        In-process runners and remote ones alike: a remote handle keeps the Controls its
        replies brought, a failed runner's included (docs/control.md).
        """
        runners = [self._local, *self.remote_env_runners]
        return Control.combine(*(runner.take_control() for runner in runners))

    def handler_errors(self) -> int:
        """Return the handler exceptions counted on the remote runners' own buses."""
        return sum(runner.handler_errors for runner in self.remote_env_runners)

    async def setup(self) -> None:
        """Start the remote runners (in parallel); announce every env (on_environment_created)."""
        await self._local.setup()
        await gather([runner.setup for runner in self.remote_env_runners])

    async def sample(self, num_timesteps: int) -> list[Episode]:
        """Sample at least ``num_timesteps`` env steps, split evenly over the sampling runners.

        A remote runner that fails (``sample_timeout_s`` bounds each request) is taken out
        of service as the fault-tolerance settings say; what the others sampled is kept,
        and the runners left sample again until the env steps returned reach
        ``num_timesteps``, as RLlib's ``synchronous_parallel_sample`` does. When none is
        left, failed runners are restarted here and now (``revive``), where RLlib ends the
        round short: the batch is full, or a ``RemoteError`` says which runners failed and
        which setting keeps them out.
        """
        episodes: list[Episode] = []
        sampled = 0
        stalled: float | None = None  # when no runner was left, first
        while sampled < num_timesteps:
            runners = self.sampling_runners
            if not runners:
                stalled = time.monotonic() if stalled is None else stalled
                await self._revive_to_sample(sampled, num_timesteps, stalled)
                continue
            share = math.ceil((num_timesteps - sampled) / len(runners))
            outcomes = await collect([functools.partial(self._sample, r, share) for r in runners])
            if any(not isinstance(outcome, Exception) for outcome in outcomes):
                self.health.sampled()  # before the round's failures are counted: they come after
            for runner, part in await self._settle(runners, outcomes):
                self.health.handed_out(runner.worker_index, part)
                episodes.extend(part)
                sampled += sum(map(len, part))
        return episodes

    async def _revive_to_sample(self, sampled: int, wanted: int, stalled: float) -> None:
        await self.health.revive(
            self.current_weights(),
            what=f"sample {wanted - sampled} more of {wanted} env steps",
            since=stalled,
            limit_s=self.config.sample_timeout_s,
            setting="sample_timeout_s",
        )

    def current_weights(self) -> dict[str, Any]:
        """Return the weights a restarted runner gets: the local runner's module's.

        That module is the learner's (the Algorithm's group) or the round's copy (the
        evaluation group), which the group's remote runners were last given.
        """
        weights: dict[str, Any] = self.local_env_runner.module.get_state()
        return weights

    async def _sample(self, runner: EnvRunnerHandle, share: int) -> list[Episode]:
        timeout = self.config.sample_timeout_s
        what = f"sample {share} env steps"
        if self.config.batch_mode != "complete_episodes":
            call = functools.partial(runner.sample, SampleRequest(num_timesteps=share))
            return await within(runner, timeout, call, what=what, setting="sample_timeout_s")
        # RLlib's "complete_episodes": whole episodes from a reset, until the share of env
        # steps is reached, in one sample() call (one on_sample_end), as RLlib's runner.
        call = functools.partial(runner.sample, SampleRequest(complete_episodes_to=share))
        return await within(runner, timeout, call, what=what, setting="sample_timeout_s")

    async def get_metrics(self) -> list[dict[str, Any]]:
        """Return a metrics snapshot (``reduce()``) of every sampling runner that answers.

        Runners that failed after handing out episodes their metrics had not reported yet
        are counted by one more snapshot (``_tally``): env steps and episodes only, so that
        the counts merged from these snapshots are those of every episode ``sample()``
        returned.
        """
        runners = self.sampling_runners
        outcomes = await collect([r.get_metrics for r in runners])
        snapshots = []
        for runner, snapshot in await self._settle(runners, outcomes):
            self.health.counted(runner.worker_index)
            snapshots.append(snapshot)
        lost = self.health.lost_counts()
        return snapshots if lost is None else [*snapshots, lost]

    async def sync_weights(self, weights: dict[str, Any]) -> None:
        """Send the learner's weights to every healthy remote runner."""
        runners = self.health.healthy_remote_runners
        outcomes = await collect([functools.partial(r.set_weights, weights) for r in runners])
        await self._settle(runners, outcomes)

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

    async def astop(self) -> None:
        """Stop every runner (close envs, end worker processes), even if one fails."""
        runners = [self._local, *self.remote_env_runners]
        outcomes = await collect([r.stop for r in runners])
        errors = [outcome for outcome in outcomes if isinstance(outcome, Exception)]
        if errors:
            raise errors[0]
