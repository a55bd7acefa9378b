"""The root of hookbus's exceptions; it lives here, in the lowest package, so all can share it."""

from __future__ import annotations

__all__ = ("HookbusError",)


class HookbusError(Exception):
    """Base class of every error hookbus raises on purpose."""
