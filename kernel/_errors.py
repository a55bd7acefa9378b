"""The kernel's exceptions: every refusal names the bad value and what is allowed."""

from __future__ import annotations

import sys
from typing import Any

from hookbus.events import ConfigError, HookbusError

__all__ = (
    "BusClosedError",
    "ConfigError",
    "HookbusError",
    "HookbusWarning",
    "LifecycleError",
    "RecordingError",
    "WrongThreadError",
    "user_stacklevel",
)


class BusClosedError(HookbusError, RuntimeError):
    """Raise when something is published to, or subscribed on, a bus that was closed."""


class WrongThreadError(HookbusError, RuntimeError):
    """Raise when a bus is published to from a thread whose event loop it does not run in.

    Also when a thread-safe entry (``publish_threadsafe``) is called where it cannot work:
    on the bus's own loop thread (waiting there would deadlock), or before the bus has an
    event loop to run the publish in. The message names the thread-safe way.
    """


class RecordingError(HookbusError):
    """Raise when a recording cannot be read, or an event cannot be recorded.

    ``offset`` is the byte offset where the bad frame or line starts (for an event refused
    by a Recorder, where it would have started). When what stopped reading is a sound event
    of a type this process has not defined, ``unknown_tag`` is its tag and ``missing_type``
    the name the header gives that type (``"module:Class"``), or None if it lists none;
    both are None for damage.
    """

    def __init__(
        self,
        message: str,
        *,
        offset: int,
        missing_type: str | None = None,
        unknown_tag: str | None = None,
    ) -> None:
        super().__init__(f"{message} (at byte offset {offset})")
        self.offset = offset
        self.missing_type = missing_type
        self.unknown_tag = unknown_tag


class LifecycleError(HookbusError):
    """Raise when an event stream breaks the hook contract; ``event`` is the first offender.

    The message names the event (source, seq, hook, episode id) and the rule it broke.
    """

    def __init__(self, rule: str, *, event: Any) -> None:
        episode = getattr(event, "episode_id", None)
        where = f"event {event.source!r} seq {event.seq} {event.hook}"
        where += f" (episode {episode!r})" if episode else ""
        super().__init__(f"{where} breaks the lifecycle: {rule}")
        self.event = event
        self.rule = rule


class HookbusWarning(UserWarning):
    """Warn about something that works but is probably not what was meant."""


def user_stacklevel() -> int:
    """Return the ``stacklevel`` that makes a warning point at the user's code.

    The first frame, counting outwards from the caller of ``warnings.warn``, whose module is
    not hookbus's own: however deep in hookbus the warning is raised (``Bus(...)``,
    ``config.callbacks(...)``, ``build()``), it names the user's file and line.
    """
    frame = sys._getframe(1)  # the function about to warn
    level = 1
    while frame is not None and str(frame.f_globals.get("__name__", "")).startswith("hookbus."):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level
