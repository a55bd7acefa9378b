"""The ``"process"`` backend: an EnvRunner in a worker process, driven from the event loop."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from hookbus.events import BaseEvent
from hookbus.kernel import LIVE_ARGS, Bus, ConfigError, Episode

from .._env_runner import SampleSummary
from ._wire import (
    Call,
    Done,
    Failed,
    GetMetrics,
    Init,
    RemoteError,
    Reply,
    Request,
    Sample,
    SampleAndGetMetrics,
    Sampled,
    Setup,
    SetWeights,
    Stop,
    Summary,
    decode_reply,
    episode_from_wire,
    error_from_wire,
    frame,
)

if TYPE_CHECKING:
    from .._config import AlgorithmConfig
    from ._base import EnvRunnerHandle

__all__ = ("ProcessEnvRunner",)

R = TypeVar("R", bound=Reply)

_HOOKS_WITH_ENV_INDEX = frozenset(h for h, args in LIVE_ARGS.items() if "env_index" in args)
_STOP_TIMEOUT_S = 10.0


class ProcessEnvRunner:
    """Drive an EnvRunner living in a worker process, with the EnvRunner's API (async).

    The worker builds its own bus and callback instances from the config (observers
    excepted) and its own copy of the module; the events that observers on the Algorithm's
    bus want are sent back after each call and forwarded to them in order.
    """

    in_process = False  # a worker process: requests wait on its pipe, and may time out

    def __init__(
        self, config: AlgorithmConfig[Any], *, bus: Bus, worker_index: int, module: Any = None
    ) -> None:
        self.config = config
        self.bus = bus
        self.worker_index = worker_index
        self.module: Any = module
        self._process: Process | None = None
        self._replies: BufferedByteReceiveStream | None = None
        self._lock: anyio.Lock | None = None
        self._pid: int | None = None  # the last worker's, for messages after it ended
        self.handler_errors = 0
        """Handler exceptions the worker's bus counted (under ``on_error="log"``), in all."""
        self._errors_before = 0  # counted by workers this runner had before a restart

    @property
    def healthy(self) -> bool:
        """Whether the worker process is running (not yet started, stopped or lost: False)."""
        return self._process is not None and self._process.returncode is None

    alive = healthy  # its name before the backend contract

    @property
    def where(self) -> str:
        """Name this runner and its worker process, for messages."""
        if self._process is not None:
            process = f"worker process {self._process.pid}"
        elif self._pid is not None:
            process = f"worker process {self._pid}, ended"
        else:
            process = "worker process not started"
        return f"env runner {self.worker_index} ({process})"

    # --- the EnvRunner's API ----------------------------------------------------------------

    async def setup(self) -> None:
        """Start the worker, send it the config and module, publish its env's creation."""
        payload = _pickled_config(self.config, self.module)
        self._errors_before = self.handler_errors  # a restarted worker counts from 0 again
        self._process = await anyio.open_process(
            # Our pid: the worker exits as soon as its parent is another (we died).
            [sys.executable, "-m", "hookbus.runners.backends._worker", str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,
        )
        self._pid = self._process.pid
        assert self._process.stdout is not None
        self._replies = BufferedByteReceiveStream(self._process.stdout)
        self._lock = anyio.Lock()
        await self._request(Init(worker_index=self.worker_index, **payload))
        await self._request(Setup())

    async def sample(
        self,
        num_timesteps: int | None = None,
        num_episodes: int | None = None,
        random_actions: bool = False,
        *,
        force_reset: bool = False,
        exact: bool = False,
    ) -> list[Episode]:
        """Sample in the worker; forward its events to observers; return the episode chunks."""
        request = Sample(
            num_timesteps=num_timesteps,
            num_episodes=num_episodes,
            random_actions=random_actions,
            force_reset=force_reset,
            exact=exact,
        )
        reply = await self._request(request, Sampled)
        return [episode_from_wire(e) for e in reply.episodes]

    async def sample_and_get_metrics(
        self,
        num_timesteps: int | None = None,
        num_episodes: int | None = None,
        *,
        force_reset: bool = False,
        exact: bool = False,
    ) -> SampleSummary:
        """Sample in the worker and return counts and metrics; the episodes stay there."""
        request = SampleAndGetMetrics(
            num_timesteps=num_timesteps,
            num_episodes=num_episodes,
            force_reset=force_reset,
            exact=exact,
        )
        reply = await self._request(request, Summary)
        return SampleSummary(reply.num_env_steps, reply.num_episodes, reply.metrics)

    async def get_metrics(self) -> dict[str, Any]:
        """Return the worker runner's metrics snapshot."""
        snapshot: dict[str, Any] = (await self._request(GetMetrics(), Done)).value
        return snapshot

    async def set_weights(self, weights: dict[str, Any]) -> None:
        """Load the learner's weights into the worker's module."""
        await self._request(SetWeights(weights=weights))

    async def apply(self, fn: Callable[[Any], Any]) -> Any:
        """Return ``fn(env_runner)`` computed in the worker (``fn`` must pickle)."""
        return await self._call("runner", fn)

    async def foreach_env(self, fn: Callable[[Any], Any]) -> list[Any]:
        """Call ``fn(sub_env)`` on the worker's sub-envs (``fn`` must pickle)."""
        results: list[Any] = await self._call("env", fn)
        return results

    async def foreach_env_with_context(self, fn: Callable[[Any, Any], Any]) -> list[Any]:
        """Call ``fn(sub_env, env_context)`` on the worker's sub-envs (``fn`` must pickle)."""
        results: list[Any] = await self._call("env_with_context", fn)
        return results

    async def kill(self) -> None:
        """End the worker process at once (a hung env cannot be asked to stop)."""
        process, self._process = self._process, None
        if process is not None:
            await _end(process)

    async def stop(self) -> None:
        """Ask the worker to close its env and exit; kill it if it does not."""
        process, self._process = self._process, None
        if process is None:
            return
        try:
            with anyio.move_on_after(_STOP_TIMEOUT_S):
                await self._send(process, Stop())
                await process.wait()
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass  # already gone
        finally:
            await _end(process)

    # --- the pipe ---------------------------------------------------------------------------

    async def _call(self, on: Any, fn: Callable[..., Any]) -> Any:
        try:
            payload = pickle.dumps(fn)
        except Exception as exc:
            raise ConfigError(f"cannot send {fn!r} to {self.where}: {exc}") from exc
        reply = await self._request(Call(on=on, fn=payload), Done)
        return pickle.loads(reply.value)

    async def _forward(self, events: Sequence[BaseEvent]) -> None:
        for event in events:
            # env_index is the one live argument an event carries, for the hooks that have it
            # (on_postprocess_trajectory's event carries it, but its handlers take none).
            if event.hook in _HOOKS_WITH_ENV_INDEX:
                await self.bus.forward(event, env_index=event.env_index)  # type: ignore[attr-defined]
            else:
                await self.bus.forward(event)

    async def _request(self, message: Request, expect: type[R] = Done) -> R:  # type: ignore[assignment]
        """Send ``message``, forward the reply's events, return the reply (``expect``)."""
        process, replies, lock = self._process, self._replies, self._lock
        if process is None or replies is None or lock is None:
            raise RemoteError.lost(f"{self.where} is not running")
        message.forward = sorted(self.bus.observed_hooks())
        async with lock:
            answered = False
            try:
                await self._send(process, message)
                head = await replies.receive_exactly(4)
                body = await replies.receive_exactly(int.from_bytes(head, "little"))
                answered = True
            except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError) as exc:
                code = await _exit_code(process)
                raise RemoteError.lost(f"{self.where} died (exit code {code})") from exc
            finally:
                if not answered:
                    # Cancelled (a timeout) or broken between request and reply: the pipe is
                    # out of step for good, so this worker can serve no further request.
                    if self._process is process:
                        self._process = None
                    await _end(process)
        reply = decode_reply(body)
        self.handler_errors = self._errors_before + reply.handler_errors
        await self._forward(reply.events)
        if isinstance(reply, Failed):
            raise error_from_wire(reply.error, self.where)
        if not isinstance(reply, expect):
            raise RemoteError(
                f"{self.where} answered {type(reply).__name__}, not {expect.__name__}"
            )
        return reply

    @staticmethod
    async def _send(process: Process, message: Request) -> None:
        assert process.stdin is not None
        await process.stdin.send(frame(message))


async def _end(process: Process) -> None:
    """Kill ``process`` unless it exited, and release its pipes (shielded from cancellation)."""
    with anyio.CancelScope(shield=True):
        if process.returncode is None:
            try:
                process.kill()
            except ProcessLookupError:
                pass  # exited just now
            await process.wait()
        await process.aclose()


async def _exit_code(process: Process) -> int | None:
    with anyio.move_on_after(1.0):
        await process.wait()
    return process.returncode


def _pickled_config(config: AlgorithmConfig[Any], module: Any) -> dict[str, Any]:
    """Pickle what a worker needs, or explain what cannot cross to a process."""
    try:
        data = pickle.dumps(config)
        module_data = pickle.dumps(module)
    except (pickle.PicklingError, AttributeError, TypeError) as exc:
        raise ConfigError(
            f"backend='process' sends the config to worker processes with pickle, which "
            f"failed: {exc}. Define callbacks, env creators and env_task_fn at module level "
            f"(lambdas and local functions do not pickle), or use backend='inline'"
        ) from exc
    main_path = None
    if b"__main__" in data:  # the config refers to objects of the main script
        main = sys.modules["__main__"]
        main_path = getattr(main, "__file__", None)
        if main_path is None:
            raise ConfigError(
                "backend='process' cannot send objects defined in an interactive session's "
                "__main__ to worker processes; define them in a module"
            )
    return {
        "config": data,
        "module": module_data,
        "main_path": main_path,
        "sys_path": list(sys.path),
    }


if TYPE_CHECKING:  # mypy checks that the class keeps the backend contract
    _contract: type[EnvRunnerHandle] = ProcessEnvRunner
