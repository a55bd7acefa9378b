"""The ``"inline"`` backend: an EnvRunner stepping in the caller's event loop."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import anyio

from hookbus.kernel import Bus, Control

from ..env_runner import EnvRunner, SampleRequest, SampleSummary, env_runner_class
from ..episodes import Episode
from ._origin import note_steps, runner_steps

if TYPE_CHECKING:
    from .._loop import LoopThread
    from ..config import AlgorithmConfig
    from ._base import EnvRunnerHandle

__all__ = ("InlineEnvRunner", "inline_handle", "share_loop")

logger = logging.getLogger("hookbus")


class InlineEnvRunner:
    """Drive an in-process ``EnvRunner`` through the backend contract.

    It shares the Algorithm's bus and callback instances, so nothing is forwarded and
    handler errors are counted on that bus. ``env_runner`` is the EnvRunner itself.
    """

    in_process = True  # it steps in this thread: requests never wait, timeouts cannot bite
    handler_errors = 0  # counted on the shared bus
    _killed = False  # kill() closed the env; setup() makes the runner anew (a restart)

    def __init__(
        self, config: AlgorithmConfig[Any], *, bus: Bus, worker_index: int, module: Any = None
    ) -> None:
        self.env_runner = env_runner_class(config)(
            config, bus=bus, module=module, worker_index=worker_index
        )
        self.worker_index = worker_index

    @classmethod
    def wrapping(cls, env_runner: EnvRunner) -> InlineEnvRunner:
        """Return a handle for an existing EnvRunner."""
        handle = cls.__new__(cls)
        handle.env_runner = env_runner
        handle.worker_index = env_runner.worker_index
        return handle

    @property
    def module(self) -> Any:
        """The runner's module (shared with the learner)."""
        return self.env_runner.module

    @module.setter
    def module(self, module: Any) -> None:
        self.env_runner.module = module

    @property
    def where(self) -> str:
        """Name the runner for messages."""
        return f"env runner {self.worker_index} (in-process)"

    @property
    def healthy(self) -> bool:
        """True unless ``kill()`` ended the runner (after its env failed) until ``setup()``."""
        return not self._killed

    def take_control(self) -> Control | None:
        """Return what the runner's handlers asked for since last time (shared bus, no copy)."""
        return self.env_runner.take_control()

    async def setup(self) -> None:
        """Publish ``on_environment_created``; after ``kill()``, first make the runner anew."""
        if self._killed:
            old = self.env_runner
            with _noting_steps(None):  # its constructor: before any step
                self.env_runner = env_runner_class(old.config)(
                    old.config, bus=old.bus, module=old.module, worker_index=self.worker_index
                )
            self.env_runner.event_seq = old.event_seq  # the source's numbering goes on
            self.env_runner.loop = old.loop
            self._killed = False
        with _noting_steps(self.env_runner):
            await self.env_runner.setup()

    async def sample(self, request: SampleRequest) -> list[Episode]:
        """Sample in this loop."""
        with _noting_steps(self.env_runner):
            return await self.env_runner.sample_request(request)

    async def sample_and_get_metrics(self, request: SampleRequest) -> SampleSummary:
        """Sample in this loop; return counts and metrics."""
        with _noting_steps(self.env_runner):
            return await self.env_runner.sample_and_get_metrics(request)

    async def get_metrics(self) -> dict[str, Any]:
        """Return the runner's metrics snapshot."""
        return self.env_runner.get_metrics()

    async def set_weights(self, weights: dict[str, Any]) -> None:
        """Load weights into the runner's module."""
        with _noting_steps(self.env_runner):
            self.env_runner.set_weights(weights)

    async def apply(self, fn: Callable[[Any], Any], *, in_thread: bool = True) -> Any:
        """Return ``fn(env_runner)``, computed in a worker thread of this loop.

        There ``fn`` may call the runner's sync API (``sample()`` blocks on this loop,
        which is free meanwhile), as RLlib's functions do. ``in_thread=False`` calls it
        here and now (sync code on the loop's own thread, which cannot wait).
        """
        if not in_thread:
            return fn(self.env_runner)
        return await anyio.to_thread.run_sync(fn, self.env_runner)

    async def foreach_env(self, fn: Callable[[Any], Any]) -> list[Any]:
        """Call ``fn`` on every sub-env."""
        return self.env_runner.foreach_env(fn)

    async def foreach_env_with_context(self, fn: Callable[[Any, Any], Any]) -> list[Any]:
        """Call ``fn(sub_env, env_context)`` on every sub-env."""
        return self.env_runner.foreach_env_with_context(fn)

    async def stop(self) -> None:
        """Close the env."""
        self.env_runner.stop()

    async def kill(self) -> None:
        """End the runner (its env failed): close the env; ``setup()`` starts a new one."""
        if self._killed:
            return
        self._killed = True
        try:
            self.env_runner.stop()
        except Exception as exc:  # a failed env may fail to close as well
            logger.warning("hookbus: closing the env of %s failed: %s", self.where, repr(exc))

    def __repr__(self) -> str:
        return f"<InlineEnvRunner {self.env_runner!r}>"


@contextmanager
def _noting_steps(env_runner: EnvRunner | None) -> Iterator[None]:
    """Note on what the body raises the env steps ``env_runner`` had sampled (None: 0)."""
    try:
        yield
    except Exception as exc:
        note_steps(exc, runner_steps(env_runner))
        raise


def inline_handle(env_runner: EnvRunner) -> EnvRunnerHandle:
    """Return a handle driving ``env_runner``, an EnvRunner made already, in this loop."""
    return InlineEnvRunner.wrapping(env_runner)


def share_loop(handle: EnvRunnerHandle, loop: LoopThread | None) -> None:
    """Let an in-process runner's sync API block on ``loop``, the group's loop thread.

    Runners elsewhere block on a loop of their own: nothing to do for them.
    """
    if isinstance(handle, InlineEnvRunner):
        handle.env_runner.loop = loop


if TYPE_CHECKING:  # mypy checks that the class keeps the backend contract
    _contract: type[EnvRunnerHandle] = InlineEnvRunner
