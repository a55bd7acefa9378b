"""EnvRunnerGroup: the local runner and the remote ones, sampled together."""

from __future__ import annotations

import functools
import logging
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from hookbus.kernel import Bus, Episode

from .._env_runner import EnvRunner
from .._loop import LoopThread, run_sync
from . import load_backend
from ._base import EnvRunnerHandle
from ._inline import InlineEnvRunner

if TYPE_CHECKING:
    from .._config import AlgorithmConfig

__all__ = ("EnvRunnerGroup", "gather")

T = TypeVar("T")

logger = logging.getLogger("hookbus")


class EnvRunnerGroup:
    """Hold ``local_env_runner`` (index 0) and ``num_env_runners`` remote runners (1..N).

    As in RLlib, the remote runners sample when there are any; otherwise the local one does.
    The remote runners are handles of the config's backend (``backends.BACKENDS``): tasks
    in this event loop (``"inline"``) or worker processes (``"process"``); the group uses
    only the contract (``backends/_base.py``).

    A remote runner whose worker died or hung is *failed* (``mark_failed``): the group's
    methods leave it out until ``restore_env_runners()`` restarts it, as the config's
    fault-tolerance settings allow.

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
    ) -> None:
        self.config = config
        self.local_env_runner = EnvRunner(config, bus=bus, module=module, worker_index=0)
        """The local EnvRunner (it samples when there are no remote runners)."""
        self._local = InlineEnvRunner.wrapping(self.local_env_runner)
        make = load_backend(config.backend)
        self.remote_env_runners: list[EnvRunnerHandle] = [
            make(config, bus=bus, worker_index=index, module=module)
            for index in range(1, config.num_env_runners + 1)
        ]
        """The remote runners' handles (``backends/_base.py``), worker index 1..N."""
        self.loop = loop
        """The event loop thread that sync calls go to (None: the caller's loop)."""
        self._failed: dict[int, float] = {}  # worker index -> when it failed (monotonic)
        self._restarts: dict[int, int] = {}  # worker index -> restarts tried

    @property
    def sampling_runners(self) -> Sequence[EnvRunnerHandle]:
        """The runners that sample: the healthy remote ones, or the local one alone."""
        if not self.remote_env_runners:
            return [self._local]
        return self.healthy_remote_runners or [self._local]

    @property
    def healthy_remote_runners(self) -> list[EnvRunnerHandle]:
        """The remote runners that have not failed and whose worker is there."""
        return [
            r for r in self.remote_env_runners if r.worker_index not in self._failed and r.healthy
        ]

    @property
    def num_env_runners(self) -> int:
        """How many remote runners there are."""
        return len(self.remote_env_runners)

    # --- health (RLlib's names) -------------------------------------------------------------

    def healthy_env_runner_ids(self) -> list[int]:
        """Return the worker indices of the healthy remote runners."""
        return [r.worker_index for r in self.healthy_remote_runners]

    def num_healthy_remote_workers(self) -> int:
        """Return how many remote runners are healthy."""
        return len(self.healthy_remote_runners)

    def num_remote_worker_restarts(self) -> int:
        """Return how many restarts of failed remote runners were tried in all."""
        return sum(self._restarts.values())

    def mark_failed(self, worker_index: int) -> None:
        """Take remote runner ``worker_index`` out of service (its worker is gone)."""
        self._failed.setdefault(worker_index, time.monotonic())

    def mark_lost(self, runners: Sequence[EnvRunnerHandle]) -> None:
        """Mark failed those of ``runners`` whose worker was lost (a timeout ended it, say)."""
        for runner in runners:
            if not runner.healthy:
                self.mark_failed(runner.worker_index)

    async def restore_env_runners(self, weights: dict[str, Any]) -> list[int]:
        """Restart the failed runners the fault-tolerance settings allow; return their indices.

        A runner is restarted once ``delay_between_env_runner_restarts_s`` have passed since
        it failed, at most ``max_num_env_runner_restarts`` times, and only with
        ``restart_failed_env_runners``; it comes back with ``weights``. A restart that fails
        counts as one and leaves the runner failed.
        """
        config = self.config
        if not self._failed or not config.restart_failed_env_runners:
            return []
        now = time.monotonic()
        due = [
            index
            for index, failed_at in self._failed.items()
            if now - failed_at >= config.delay_between_env_runner_restarts_s
            and self._restarts.get(index, 0) < config.max_num_env_runner_restarts
        ]
        if not due:
            return []
        restarted = await gather([functools.partial(self._restart, i, weights) for i in due])
        return [index for index, ok in zip(due, restarted, strict=True) if ok]

    async def _restart(self, worker_index: int, weights: dict[str, Any]) -> bool:
        runner = self.remote_env_runners[worker_index - 1]
        self._restarts[worker_index] = self._restarts.get(worker_index, 0) + 1
        try:
            await runner.kill()  # make sure the old worker is gone
            await runner.setup()
            await runner.set_weights(weights)
        except Exception as exc:  # a restart that fails is one more failure, not fatal
            await runner.kill()
            self._failed[worker_index] = time.monotonic()
            logger.warning("hookbus: restarting %s failed: %r", runner.where, exc)
            return False
        del self._failed[worker_index]
        return True

    def set_module(self, module: Any) -> None:
        """Give every runner without a module the learner's ``module``.

        In-process runners share it; worker processes get a copy when they start.
        """
        for runner in [self._local, *self.remote_env_runners]:
            if runner.module is None:
                runner.module = module

    def handler_errors(self) -> int:
        """Return the handler exceptions counted on the remote runners' own buses."""
        return sum(runner.handler_errors for runner in self.remote_env_runners)

    async def setup(self) -> None:
        """Start the remote runners (in parallel); announce every env (on_environment_created)."""
        await self._local.setup()
        await gather([runner.setup for runner in self.remote_env_runners])

    async def sample(self, num_timesteps: int) -> list[Episode]:
        """Sample about ``num_timesteps`` env steps, split evenly over the sampling runners."""
        runners = self.sampling_runners
        share = math.ceil(num_timesteps / len(runners))
        parts = await gather([functools.partial(r.sample, num_timesteps=share) for r in runners])
        return [episode for part in parts for episode in part]

    async def get_metrics(self) -> list[dict[str, Any]]:
        """Return a metrics snapshot (``reduce()``) of every sampling runner."""
        return await gather([r.get_metrics for r in self.sampling_runners])

    async def sync_weights(self, weights: dict[str, Any]) -> None:
        """Send the learner's weights to every healthy remote runner."""
        await gather(
            [functools.partial(r.set_weights, weights) for r in self.healthy_remote_runners]
        )

    # --- calling into the runners (RLlib's sync names, and async twins) ---------------------

    async def aforeach_env_runner(
        self, fn: Callable[[Any], Any], *, local_env_runner: bool = True
    ) -> list[Any]:
        """Call ``fn(env_runner)`` on every healthy runner (the local one first); return results.

        In a worker process ``fn`` runs there (it must pickle).
        """
        return [await r.apply(fn) for r in self._targets(local_env_runner)]

    async def aforeach_env(self, fn: Callable[[Any], Any]) -> list[list[Any]]:
        """Call ``fn(sub_env)`` on every sub-env of every healthy runner; results per runner."""
        return [await r.foreach_env(fn) for r in self._targets(True)]

    async def aforeach_env_with_context(self, fn: Callable[[Any, Any], Any]) -> list[list[Any]]:
        """Call ``fn(sub_env, env_context)`` on every sub-env of every healthy runner."""
        return [await r.foreach_env_with_context(fn) for r in self._targets(True)]

    def foreach_env_runner(
        self, fn: Callable[[Any], Any], *, local_env_runner: bool = True
    ) -> list[Any]:
        """Sync twin of ``aforeach_env_runner()``: works from scripts and sync callbacks."""
        call = functools.partial(self.aforeach_env_runner, local_env_runner=local_env_runner)
        return self._sync(
            "env_runner_group.aforeach_env_runner(fn)", call, fn, local=local_env_runner
        )

    def foreach_env(self, fn: Callable[[Any], Any]) -> list[list[Any]]:
        """Sync twin of ``aforeach_env()``: works from scripts and sync callbacks."""
        return self._sync("env_runner_group.aforeach_env(fn)", self.aforeach_env, fn)

    def foreach_env_with_context(self, fn: Callable[[Any, Any], Any]) -> list[list[Any]]:
        """Sync twin of ``aforeach_env_with_context()``."""
        return self._sync(
            "env_runner_group.aforeach_env_with_context(fn)", self.aforeach_env_with_context, fn
        )

    def _targets(self, local: bool) -> list[EnvRunnerHandle]:
        return [self._local, *self.healthy_remote_runners] if local else self.healthy_remote_runners

    def _sync(
        self, twin: str, call: Callable[..., Awaitable[T]], fn: Any, *, local: bool = True
    ) -> T:
        may_wait = any(not r.in_process for r in self._targets(local))
        return run_sync(self.loop, twin, call, fn, may_wait=may_wait)

    async def astop(self) -> None:
        """Stop every runner (close envs, end worker processes), even if one fails."""
        await self._local.stop()
        await gather([r.stop for r in self.remote_env_runners])


async def gather(calls: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
    """Await ``calls`` concurrently; return their results in order.

    A single call runs directly. When calls fail, the first failure is raised as itself
    (not as an ExceptionGroup), so ``train()`` raises what a handler raised; the others are
    named in a note. Cancellation is never folded in.
    """
    if len(calls) <= 1:
        return [await call() for call in calls]
    results: list[Any] = [None] * len(calls)

    async def run(i: int) -> None:
        results[i] = await calls[i]()

    try:
        async with anyio.create_task_group() as tg:
            for i in range(len(calls)):
                tg.start_soon(run, i)
    except BaseExceptionGroup as group:
        first, *others = group.exceptions
        if not isinstance(first, Exception) or any(
            not isinstance(exc, Exception) for exc in others
        ):
            raise  # cancellation or an interrupt: let anyio's semantics stand
        if others:
            first.add_note(
                f"hookbus: {len(others)} more failed as well: "
                + "; ".join(f"{type(exc).__name__}: {exc}" for exc in others)
            )
        raise first from None
    return results
