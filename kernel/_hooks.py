"""What each hook hands its handlers besides ``event``: the live-argument table of SPEC.md.

Every event type declares its own (``live_args``, a class attribute; none by default): the
hooks' in ``events``, yours on your classes. The tables here are derived from them.
"""

from __future__ import annotations

from hookbus.events import HOOKS, BaseEvent, event_type

__all__ = ("LIVE_ARGS", "OPTIONAL_LIVE_ARGS", "event_type_for", "hook_name", "live_args_of")

LIVE_ARGS: dict[str, tuple[str, ...]] = {hook: cls.live_args for hook, cls in HOOKS.items()}
"""Hook name to the keyword arguments (besides ``event``) its handlers receive, in order:
each hook's event type declares them (``live_args``), as an event type of yours does."""

OPTIONAL_LIVE_ARGS = frozenset(a for cls in HOOKS.values() for a in cls.optional_live_args)
"""Live arguments added after SPEC.md's table (each event type's ``optional_live_args``): a
handler gets one only if it names it or takes ``**kwargs``, so a handler that names every
other argument of its hook (and has no ``**kwargs``) keeps working when one is added."""


def hook_name(name: str) -> str:
    """Return ``name`` if it is a hook (yours included), else raise ConfigError saying why."""
    return event_type(name).hook


def event_type_for(key: object) -> type[BaseEvent]:
    """Return the event type for an event type or a hook name, or raise ConfigError."""
    return event_type(key)


def live_args_of(hook: str) -> tuple[str, ...]:
    """Return the live arguments (besides ``event``) that handlers of ``hook`` receive.

    Each event type declares them as the class attribute ``live_args`` (none by default).
    """
    live = LIVE_ARGS.get(hook)
    if live is not None:
        return live
    return event_type(hook).live_args
