"""Runner failures: what fault tolerance handles, and requests that report instead of raise.

A remote runner *fails* when its worker is lost (killed, crashed: ``RemoteError`` with
``worker_lost``), when a request outlives its timeout (the worker is then ended: the same
error), or when its env raises in ``step()``/``reset()`` (``is_env_failure``). Such a runner
is taken out of service and restarted as ``config.fault_tolerance()`` says. A handler's
exception is not a failure: it propagates (SPEC.md, Errors).

Requests to several runners run each in its own task (``collect``): one runner's failure
never cancels another's request, so nothing a healthy runner sampled is lost (a cancelled
request would end its worker, whose pipe is then out of step).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import anyio

from ..backends import EnvRunnerHandle, RemoteError
from ..envs import is_env_failure

__all__ = ("collect", "gather", "is_runner_failure", "within")

T = TypeVar("T")


def is_runner_failure(exc: BaseException) -> bool:
    """Tell whether ``exc`` means its runner failed (lost worker, timeout, env error)."""
    return (isinstance(exc, RemoteError) and exc.worker_lost) or is_env_failure(exc)


async def collect(
    calls: Sequence[Callable[[], Awaitable[T]]], *, one_by_one: bool = False
) -> list[T | Exception]:
    """Await ``calls`` concurrently; return each one's result or the Exception it raised.

    No call is cancelled because another failed. Cancellation from outside (and other
    BaseExceptions) still propagates as anyio has it. ``one_by_one`` awaits them in turn
    instead, in this task: calls that never suspend (in-process runners) then never
    suspend this coroutine either, so sync code may drive it (``_loop.run_sync``).
    """
    outcomes: list[Any] = [None] * len(calls)

    async def run(i: int) -> None:
        try:
            outcomes[i] = await calls[i]()
        except Exception as exc:
            outcomes[i] = exc

    if one_by_one or len(calls) == 1:
        for i in range(len(calls)):
            await run(i)
        return outcomes
    async with anyio.create_task_group() as tg:
        for i in range(len(calls)):
            tg.start_soon(run, i)
    return outcomes


async def within(
    runner: EnvRunnerHandle,
    limit_s: float | None,
    call: Callable[[], Awaitable[T]],
    *,
    what: str,
    setting: str,
) -> T:
    """Return ``await call()``; give up on a runner elsewhere after ``limit_s`` seconds.

    Giving up cancels the request, which ends the runner's worker; that is reported as a
    lost worker naming ``what`` it did not do and the ``setting`` that allowed it so long.
    An in-process runner steps in this thread: nothing could interrupt it, so it gets no
    timeout.
    """
    if limit_s is None or runner.in_process:
        return await call()
    where = runner.where  # before the worker ends
    with anyio.move_on_after(limit_s):
        return await call()
    raise RemoteError.lost(
        f"{where} did not {what} within {setting}={limit_s}; its worker was stopped"
    )


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
