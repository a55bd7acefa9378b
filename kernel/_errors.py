"""The kernel's exceptions: every refusal names the bad value and what is allowed."""

from __future__ import annotations

from hookbus.events import HookbusError

__all__ = (
    "BusClosedError",
    "ConfigError",
    "HookbusError",
    "HookbusWarning",
    "RecordingError",
)


class ConfigError(HookbusError, ValueError):
    """Raise when a subscriber, hook name, plugin or option is not one the kernel accepts."""


class BusClosedError(HookbusError, RuntimeError):
    """Raise when something is published to, or subscribed on, a bus that was closed."""


class RecordingError(HookbusError):
    """Raise when a recording cannot be read, or an event cannot be recorded.

    ``offset`` is the byte offset where the bad frame or line starts (for an event refused
    by a Recorder, where it would have started).
    """

    def __init__(self, message: str, *, offset: int) -> None:
        super().__init__(f"{message} (at byte offset {offset})")
        self.offset = offset


class HookbusWarning(UserWarning):
    """Warn about something that works but is probably not what was meant."""
