"""A hook's live dispatcher: what publishers on a hot path hold instead of calling publish()."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hookbus.events import BaseEvent

from ._hooks import live_args_of

__all__ = ("Dispatcher",)


class Dispatcher:
    """One hook's compiled chain; the bus keeps ``call`` current as subscribers change.

    Publishers on a hot path hold the dispatcher and skip ``publish()``'s lookup::

        step = bus.dispatcher(EpisodeStep)
        ...
        if step.call is not None:              # no subscriber: build no event at all
            event = EpisodeStep(...)
            if step.is_async:
                await step.call(event, episode, env_runner, metrics_logger, env, module, i)
            else:
                step.call(event, episode, env_runner, metrics_logger, env, module, i)

    ``call`` takes the event and the hook's live arguments (``live_args``, in that order),
    positionally or by keyword; those left out are None. ``observe`` / ``observe_is_async``
    are the same for the chain's observers alone (see ``Bus.forward``). ``in_threads``
    is the chain run with its sync handlers in worker threads, for a chain that also has
    an async handler (None otherwise; ``Publisher(offload_sync=...)``).
    """

    __slots__ = (
        "call",
        "event_type",
        "hook",
        "in_threads",
        "is_async",
        "live_args",
        "observe",
        "observe_is_async",
    )

    def __init__(self, event_type: type[BaseEvent]) -> None:
        self.event_type = event_type
        self.hook: str = event_type.hook
        self.live_args: tuple[str, ...] = live_args_of(self.hook)
        self.call: Callable[..., Any] | None = None
        self.is_async = False
        self.in_threads: Callable[..., Any] | None = None
        self.observe: Callable[..., Any] | None = None
        self.observe_is_async = False

    def __repr__(self) -> str:
        state = "empty" if self.call is None else ("async" if self.is_async else "sync")
        return f"<Dispatcher {self.hook} ({state})>"
