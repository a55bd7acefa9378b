"""The root of hookbus's exceptions, and the refusal of a bad configuration.

They live here, in the lowest package, so that all can share them: ``events`` refuses an
invalid event type with the same ``ConfigError`` the kernel raises for a bad subscriber.
"""

from __future__ import annotations

__all__ = ("CodecError", "ConfigError", "HookbusError")


class HookbusError(Exception):
    """Base class of every error hookbus raises on purpose."""


class ConfigError(HookbusError, ValueError):
    """Raise when a subscriber, hook name, event type, plugin or option is not one hookbus
    accepts; the message names the bad value and what is allowed."""


class CodecError(HookbusError, ValueError):
    """Raise when a value cannot be encoded, or bytes do not decode to the asked type."""
