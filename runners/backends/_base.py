"""The backend contract: an EnvRunner as the EnvRunnerGroup sees it, wherever it runs.

A backend is one class implementing ``EnvRunnerHandle`` and one line in ``BACKENDS``
(``backends/__init__.py``). The group, evaluation and fault tolerance use nothing else, so
a new backend (Ray actors, say) touches this folder only. Every method is async: a handle
may wait on a pipe or an actor; the inline handle simply never suspends for long.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from hookbus.kernel import Bus, Control

from ..env_runner import SampleRequest, SampleSummary
from ..episodes import Episode

if TYPE_CHECKING:
    from ..config import AlgorithmConfig

__all__ = ("EnvRunnerHandle", "HandleFactory")


class EnvRunnerHandle(Protocol):
    """One EnvRunner, in this event loop or elsewhere, driven by the group.

    Lifecycle: built (cheap, nothing started) -> ``setup()`` (worker started, env made,
    ``on_environment_created`` published) -> requests -> ``stop()`` (polite) or ``kill()``
    (at once, for a hung or lost worker; ``setup()`` may then start it again).

    A handle whose worker is gone raises ``RemoteError`` with ``worker_lost=True`` from
    its requests and reports ``healthy`` False; a handler's or the env's own exception is
    raised as itself, noting how many env steps the runner had sampled since it was made
    (``_origin.note_steps``: where it failed, for ``fleet/_repeats``). Events the
    Algorithm's observers want are forwarded to its bus, in order, before a request
    returns; what the runner's handlers asked for (``Control``) is kept until
    ``take_control()``.
    """

    worker_index: int
    """1..N for remote runners, 0 for the local one."""
    module: Any
    """The module the runner acts with (a worker gets a copy at ``setup()``)."""

    @property
    def where(self) -> str:
        """Name the runner (and its worker) for messages."""
        ...

    @property
    def healthy(self) -> bool:
        """Whether the runner can take requests (False once its worker is lost)."""
        ...

    @property
    def in_process(self) -> bool:
        """Whether the runner steps in the caller's thread.

        Its requests then never wait (sync code on the event loop may make them), and a
        timeout cannot interrupt them; a runner elsewhere can be given up on and killed.
        """
        ...

    @property
    def handler_errors(self) -> int:
        """Handler exceptions counted where the runner's own bus lives (0 if that is ours)."""
        ...

    def take_control(self) -> Control | None:
        """Return what the runner's handlers asked for (``Control``) since last time; forget it.

        Its ``on_sample_end``, ``on_episode_end`` and ``on_episode_step`` handlers, wherever
        they run; a handle of a runner elsewhere keeps what came back with its replies (a
        failed request's included). The Algorithm reports it in ``result["control"]``.
        """
        ...

    async def setup(self) -> None:
        """Start the runner: make its env, publish ``on_environment_created``."""
        ...

    async def sample(self, request: SampleRequest) -> list[Episode]:
        """Sample as ``request`` asks (``EnvRunner.sample()``'s options); return the chunks."""
        ...

    async def sample_and_get_metrics(self, request: SampleRequest) -> SampleSummary:
        """Sample as ``request`` asks, keep the episodes there, return counts and metrics."""
        ...

    async def get_metrics(self) -> dict[str, Any]:
        """Return the runner's metrics snapshot (``MetricsLogger.reduce()``)."""
        ...

    async def set_weights(self, weights: dict[str, Any]) -> None:
        """Load the learner's module weights."""
        ...

    async def apply(self, fn: Callable[[Any], Any], *, in_thread: bool = True) -> Any:
        """Return ``fn(env_runner)``, computed where the runner lives.

        ``fn`` runs where it may call the runner's sync API (RLlib's): in a worker thread
        of the runner's loop, or in its worker. ``in_thread=False`` (in-process runners
        only) calls it in the caller's thread, which must then not wait.
        """
        ...

    async def foreach_env(self, fn: Callable[[Any], Any]) -> list[Any]:
        """Return ``[fn(sub_env) for each sub-env]`` (unwrapped)."""
        ...

    async def foreach_env_with_context(self, fn: Callable[[Any, Any], Any]) -> list[Any]:
        """Return ``[fn(sub_env, env_context) for each sub-env]``."""
        ...

    async def stop(self) -> None:
        """Close the env and end the worker, if any."""
        ...

    async def kill(self) -> None:
        """End the worker at once (no-op where there is none)."""
        ...


class HandleFactory(Protocol):
    """Build an (unstarted) handle: what a ``BACKENDS`` entry names."""

    def __call__(
        self, config: AlgorithmConfig[Any], *, bus: Bus, worker_index: int, module: Any
    ) -> EnvRunnerHandle: ...
