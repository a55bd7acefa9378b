"""An EnvRunner elsewhere, driven by typed messages: what the process and Ray backends share.

A subclass moves messages (``_exchange``: a pipe to a worker process, a call on a Ray
actor) and manages where the runner lives (``setup``, ``stop``, ``kill``). This class turns
the EnvRunner's API into requests (``_wire``) and replies back into results: it forwards
the events the Algorithm's observers want, in order, counts the remote bus's handler
errors, keeps what its handlers asked for (``Control``, for ``take_control()``), and
raises a remote exception as itself, noting where it was raised.
"""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import cloudpickle

from hookbus.events import BaseEvent
from hookbus.kernel import LIVE_ARGS, Bus, ConfigError, Control

from ..env_runner import SampleRequest, SampleSummary
from ..episodes import Episode
from ._services import serve
from ._wire import (
    Call,
    Done,
    Failed,
    GetMetrics,
    RemoteError,
    Reply,
    Request,
    Sample,
    SampleAndGetMetrics,
    Sampled,
    ServiceCall,
    ServiceResult,
    SetWeights,
    Summary,
    episode_from_wire,
    error_from_wire,
    events_from_wire,
)

if TYPE_CHECKING:
    from ..config import AlgorithmConfig

__all__ = ("RemoteEnvRunner", "import_path")

R = TypeVar("R", bound=Reply)

_HOOKS_WITH_ENV_INDEX = frozenset(h for h, args in LIVE_ARGS.items() if "env_index" in args)


def import_path() -> list[str]:
    """Return the entries of ``sys.path`` that imports here use, for a runner elsewhere.

    Python's path finder skips entries that are neither ``str`` nor ``bytes`` (a
    ``pathlib.Path`` appended by mistake): sent as text, they would reach more there.
    """
    return [os.fsdecode(p) for p in sys.path if isinstance(p, (str, bytes))]


class RemoteEnvRunner:
    """The EnvRunner's API (async) over request and reply messages; see the module doc.

    The remote side builds its own bus and callback instances from the config (observers
    excepted, as ``make_bus(config, observers=False)``) and its own copy of the module.
    """

    in_process = False  # elsewhere: requests wait, and may time out

    def __init__(
        self, config: AlgorithmConfig[Any], *, bus: Bus, worker_index: int, module: Any = None
    ) -> None:
        self.config = config
        self.bus = bus
        self.worker_index = worker_index
        self.module: Any = module
        self.handler_errors = 0
        """Handler exceptions the remote bus counted (under ``on_error="log"``), in all."""
        self._errors_before = 0  # counted by earlier incarnations (before a restart)
        # Controls the replies brought since take_control(); a restart keeps them, since
        # they were asked for all the same.
        self._control: Control | None = None
        # Per source, the seq after the last forwarded event: a restarted worker goes on
        # from there (``Init.seqs``), so observers never see a source's numbering restart.
        self._seqs: dict[str, int] = {}

    # --- what a transport provides ----------------------------------------------------------

    @property
    def where(self) -> str:
        """Name the runner and where it lives, for messages."""
        raise NotImplementedError

    async def _exchange(self, message: Request) -> Reply:
        """Send ``message`` and return its reply; a lost runner is ``RemoteError.lost``.

        A transport whose remote side may call the Algorithm's services meanwhile answers
        each ``ServiceCall`` with ``_serve_service`` and returns the final reply. A request
        cut short (cancelled) must leave the runner unable to serve another.
        """
        raise NotImplementedError

    async def _serve_service(self, call: ServiceCall) -> ServiceResult:
        """Run a remote ``ServiceCall`` on the Algorithm's services (this bus's)."""
        return await serve(self.bus.services, call)

    def _dumps(self, obj: Any) -> bytes:
        """Pickle ``obj`` for the remote side, by cloudpickle as Ray does: lambdas and
        closures travel by value (the worker unpickles with plain ``pickle``)."""
        return bytes(cloudpickle.dumps(obj))

    def _restarted(self) -> None:
        """Note that a new remote side starts (its bus counts handler errors from 0)."""
        self._errors_before = self.handler_errors

    def take_control(self) -> Control | None:
        """Return what the remote handlers asked for (``Control``) since last time; forget it."""
        control, self._control = self._control, None
        return control

    # --- the EnvRunner's API ----------------------------------------------------------------

    async def sample(self, request: SampleRequest) -> list[Episode]:
        """Sample remotely; forward its events to observers; return the episode chunks."""
        reply = await self._request(Sample(request=request), Sampled)
        # Multi-agent chunks come back as MultiAgentEpisodes: Any until EnvRunnerHandle's
        # sample() (and EnvRunner's) are typed to return either kind.
        episodes: list[Any] = [episode_from_wire(e) for e in reply.episodes]
        return episodes

    async def sample_and_get_metrics(self, request: SampleRequest) -> SampleSummary:
        """Sample remotely and return counts and metrics; the episodes stay there."""
        reply = await self._request(SampleAndGetMetrics(request=request), Summary)
        return reply.summary

    async def get_metrics(self) -> dict[str, Any]:
        """Return the remote runner's metrics snapshot."""
        snapshot: dict[str, Any] = (await self._request(GetMetrics(), Done)).value
        return snapshot

    async def set_weights(self, weights: dict[str, Any]) -> None:
        """Load the learner's weights into the remote module."""
        await self._request(SetWeights(weights=weights))

    async def apply(self, fn: Callable[[Any], Any], *, in_thread: bool = True) -> Any:
        """Return ``fn(env_runner)`` computed remotely (``fn`` must pickle).

        The worker calls it with no event loop running, so ``fn`` may call the runner's
        sync API (``in_thread`` is for in-process runners; a remote call always waits).
        """
        return await self._call("runner", fn)

    async def foreach_env(self, fn: Callable[[Any], Any]) -> list[Any]:
        """Call ``fn(sub_env)`` on the remote sub-envs (``fn`` must pickle)."""
        results: list[Any] = await self._call("env", fn)
        return results

    async def foreach_env_with_context(self, fn: Callable[[Any, Any], Any]) -> list[Any]:
        """Call ``fn(sub_env, env_context)`` on the remote sub-envs (``fn`` must pickle)."""
        results: list[Any] = await self._call("env_with_context", fn)
        return results

    # --- messages ---------------------------------------------------------------------------

    async def _call(self, on: Any, fn: Callable[..., Any]) -> Any:
        try:
            payload = self._dumps(fn)
        except Exception as exc:
            raise ConfigError(f"cannot send {fn!r} to {self.where}: {exc}") from exc
        reply = await self._request(Call(on=on, fn=payload), Done)
        return pickle.loads(reply.value)

    async def _forward(self, events: Sequence[BaseEvent]) -> None:
        for event in events:
            self._seqs[event.source] = event.seq + 1
            # env_index is the one live argument an event carries, for the hooks that have it
            # (on_postprocess_trajectory's event carries it, but its handlers take none).
            if event.hook in _HOOKS_WITH_ENV_INDEX:
                await self.bus.forward(event, env_index=event.env_index)  # type: ignore[attr-defined]
            else:
                await self.bus.forward(event)

    async def _request(self, message: Request, expect: type[R] = Done) -> R:  # type: ignore[assignment]
        """Send ``message``, forward the reply's events, return the reply (``expect``).

        The reply's Controls are kept even when it reports a failure: they were made. The
        events of a request that failed its runner (its env raised: ``is_runner_failure``)
        are dropped, as what it sampled is (docs/scaling.md); a lost worker sends none. A
        handler's exception is no runner failure: the events before it are forwarded, as
        an in-process runner's observers would have seen them.
        """
        message.forward = sorted(self.bus.observed_hooks())
        reply = await self._exchange(message)
        self.handler_errors = self._errors_before + reply.handler_errors
        if reply.control is not None:
            self._control = Control.combine(self._control, reply.control)
        if isinstance(reply, Failed):
            if not reply.error.env_failure:
                await self._forward(events_from_wire(reply.events, self.where))
            raise error_from_wire(reply.error, self.where)
        await self._forward(events_from_wire(reply.events, self.where))
        if not isinstance(reply, expect):
            raise RemoteError(
                f"{self.where} answered {type(reply).__name__}, not {expect.__name__}"
            )
        return reply
