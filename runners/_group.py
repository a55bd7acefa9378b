"""EnvRunnerGroup: the local runner and the remote ones, sampled together."""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from hookbus.kernel import Bus, Episode

from ._env_runner import EnvRunner
from ._process import ProcessEnvRunner

if TYPE_CHECKING:
    from ._config import AlgorithmConfig

__all__ = ("EnvRunnerGroup", "gather")

T = TypeVar("T")


class EnvRunnerGroup:
    """Hold ``local_env_runner`` (index 0) and ``num_env_runners`` remote runners (1..N).

    As in RLlib, the remote runners sample when there are any; otherwise the local one does.
    With the ``"inline"`` backend remote runners are tasks in this event loop; with
    ``"process"`` they are worker processes (``ProcessEnvRunner``).
    """

    def __init__(
        self,
        config: AlgorithmConfig,
        *,
        bus: Bus,
        module: Any = None,
    ) -> None:
        self.config = config
        self.local_env_runner = EnvRunner(config, bus=bus, module=module, worker_index=0)
        make: Callable[[int], Any]
        if config.backend == "process":
            make = lambda index: ProcessEnvRunner(config, bus=bus, worker_index=index)  # noqa: E731
        else:
            make = lambda index: EnvRunner(config, bus=bus, module=module, worker_index=index)  # noqa: E731
        self.remote_env_runners: list[Any] = [
            make(index) for index in range(1, config.num_env_runners + 1)
        ]

    @property
    def sampling_runners(self) -> Sequence[Any]:
        """The runners that sample for training: the remote ones, or the local one alone."""
        return self.remote_env_runners or [self.local_env_runner]

    @property
    def num_env_runners(self) -> int:
        """How many remote runners there are."""
        return len(self.remote_env_runners)

    def set_module(self, module: Any) -> None:
        """Give every runner without a module the learner's ``module``.

        In-process runners share it; worker processes get a copy when they start.
        """
        for runner in [self.local_env_runner, *self.remote_env_runners]:
            if runner.module is None:
                runner.module = module

    async def setup(self) -> None:
        """Start worker processes (in parallel); announce every env (on_environment_created)."""
        await self.local_env_runner.setup()
        await gather([runner.setup for runner in self.remote_env_runners])

    async def sample(self, num_timesteps: int) -> list[Episode]:
        """Sample about ``num_timesteps`` env steps, split evenly over the sampling runners."""
        runners = self.sampling_runners
        share = math.ceil(num_timesteps / len(runners))
        parts = await gather([functools.partial(r.sample, num_timesteps=share) for r in runners])
        return [episode for part in parts for episode in part]

    async def get_metrics(self) -> list[dict[str, Any]]:
        """Return a metrics snapshot (``reduce()``) of every sampling runner."""
        return await gather([_async(r.get_metrics) for r in self.sampling_runners])

    async def sync_weights(self, weights: dict[str, Any]) -> None:
        """Send the learner's weights to every runner that holds its own module copy."""
        await gather(
            [_async(functools.partial(r.set_weights, weights)) for r in self.remote_env_runners]
        )

    async def foreach_env_runner(
        self, fn: Callable[[Any], Any], *, local_env_runner: bool = True
    ) -> list[Any]:
        """Call ``fn(runner)`` on every runner (the local one first) and return the results."""
        results = [fn(self.local_env_runner)] if local_env_runner else []
        for runner in self.remote_env_runners:
            remote = isinstance(runner, ProcessEnvRunner)
            results.append(await runner.apply(fn) if remote else fn(runner))
        return results

    async def foreach_env(self, fn: Callable[[Any], Any]) -> list[list[Any]]:
        """Call ``fn(sub_env)`` on every sub-env of every runner; results per runner."""
        local = [self.local_env_runner.foreach_env(fn)]
        return local + [await _maybe_await(r.foreach_env(fn)) for r in self.remote_env_runners]

    async def foreach_env_with_context(self, fn: Callable[[Any, Any], Any]) -> list[list[Any]]:
        """Call ``fn(sub_env, env_context)`` on every sub-env of every runner."""
        local = [self.local_env_runner.foreach_env_with_context(fn)]
        remote = self.remote_env_runners
        return local + [await _maybe_await(r.foreach_env_with_context(fn)) for r in remote]

    async def astop(self) -> None:
        """Stop every runner (close envs, end worker processes), even if one fails."""
        self.local_env_runner.stop()
        await gather([_async(r.stop) for r in self.remote_env_runners])


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


def _async(fn: Callable[[], Any]) -> Callable[[], Awaitable[Any]]:
    """Wrap a call that may return a value or an awaitable (inline vs process runners)."""

    async def call() -> Any:
        value = fn()
        return await value if inspect.isawaitable(value) else value

    return call


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value
