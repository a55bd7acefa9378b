"""Which event types exist: the hooks' own and the ones users define, by hook name and tag.

Defining a subclass of ``BaseEvent`` registers it: ``BaseEvent.__init_subclass__`` notes the
class, and it is checked and entered the next time anything asks the registry (every
lookup here does, and the kernel looks before it uses a type). Not at once, because
msgspec applies a Struct's class options (``frozen=``, ``tag=``) only after
``__init_subclass__`` has returned, so they cannot be checked there; a metaclass could
check them, but it makes every event construction about three times slower (63 -> 190 ns,
measured), which the per-step path cannot afford.

A class that cannot be an event (not frozen, a clashing tag or hook name, ...) is not
entered; the reason is kept, and every use of the class or of its hook name raises it as
one ``ConfigError``. Defining a class again under the same module and name (a re-run
notebook cell, ``importlib.reload``) replaces the earlier one.
"""

from __future__ import annotations

import difflib
import re
import threading
import typing
from typing import Any

from ._errors import ConfigError
from ._events import DEFINED, HOOKS, BaseEvent, hook_name_of

__all__ = ("RESERVED_HOOK_NAMES", "event_type", "event_types", "event_union")

RESERVED_HOOK_NAMES = frozenset({"on_error"})
"""Names that look like hooks but are options (``Bus(on_error=...)``, ``Callback.on_error``)."""

_HOOK_NAME = re.compile(r"on_[a-z][a-z0-9_]*")

_lock = threading.Lock()
_builtin = frozenset(HOOKS.values())
_by_hook: dict[str, type[BaseEvent]] = dict(HOOKS)
_by_tag: dict[object, type[BaseEvent]] = {cls.__struct_config__.tag: cls for cls in _builtin}
_refused: dict[type, str] = {}  # a class that is no event type -> why
_refused_hooks: dict[str, str] = {}  # its hook name -> why
_union: list[Any] = []  # [the union of _by_hook's types], while they stay the same


def event_types() -> dict[str, type[BaseEvent]]:
    """Return every event type by hook name: the hooks' (``HOOKS``), then yours by definition."""
    _enter_defined()
    return dict(_by_hook)


def event_type(key: object) -> type[BaseEvent]:
    """Return the event type for ``key``, an event type or a hook name; else ConfigError.

    The error says why: a class that is not a valid event type (and what to change), an
    unknown hook name (with the closest one), or something that is no event type at all.
    """
    _enter_defined()
    if isinstance(key, str):
        found = _by_hook.get(key)
        if found is not None:
            return found
        if key in _refused_hooks:
            raise ConfigError(_refused_hooks[key])
        close = difflib.get_close_matches(key, _by_hook, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        known, yours = ", ".join(_by_hook), _not_yet_defined(key)
        raise ConfigError(f"unknown hook {key!r}{hint}; known hooks: {known}{yours}")
    if isinstance(key, type):
        hook = getattr(key, "hook", None)
        newer = _by_hook.get(hook) if isinstance(hook, str) else None
        if newer is not None and newer is key:
            return newer
        if key in _refused:
            raise ConfigError(_refused[key])
        if newer is not None and _redefines(key, newer):
            raise ConfigError(f"{_name(key)} was defined again; use its newest definition")
        if issubclass(key, BaseEvent) and key.__dict__.get("__abstract__"):
            raise ConfigError(
                f"{_name(key)} is an abstract event base (__abstract__ = True): subscribe to "
                f"and publish its subclasses"
            )
    raise ConfigError(
        f"{key!r} is not a hookbus event type; use one of "
        f"{', '.join(cls.__name__ for cls in _by_hook.values())} or a hook name, or define "
        f"your own: a frozen msgspec.Struct subclassing hookbus.events.BaseEvent"
    )


def _not_yet_defined(hook: str) -> str:
    """Say that an event type of the user's has its hook only once it is defined: the
    name may be right and the module defining it not imported yet."""
    if not _HOOK_NAME.fullmatch(hook):
        return ""
    words = hook.removeprefix("on_").split("_")
    guess = "".join(word[:1].upper() + word[1:] for word in words)
    return (
        f". An event type of yours has its hook only once its class is defined: if "
        f"{hook!r} is yours, define or import its type (e.g. {guess}, a BaseEvent "
        f"subclass) before subscribing by its hook name"
    )


def event_union() -> Any:
    """Return the union of every event type, the hooks' and yours: decode a mixed stream
    with it (``codec.decode_msgpack(data, list[event_union()])``)."""
    _enter_defined()
    if not _union:
        with _lock:
            _union[:] = [typing.Union[tuple(_by_hook.values())]]  # noqa: UP007 -- a runtime tuple
    return _union[0]


# --- registering ----------------------------------------------------------------------------


def _enter_defined() -> None:
    """Check and enter the classes defined since the last call, in definition order."""
    if not DEFINED:  # the usual case: one list check
        return
    with _lock:
        while DEFINED:
            cls = DEFINED.pop(0)
            if cls in _builtin or cls.__dict__.get("__abstract__"):
                continue
            try:
                _enter(cls)
            except ConfigError as exc:
                _refused[cls] = str(exc)
                hook = _hook_of(cls)
                if isinstance(hook, str):
                    _refused_hooks.setdefault(hook, str(exc))
        _union.clear()


def _enter(cls: type[BaseEvent]) -> None:
    hook, tag = _checked(cls)
    for table, key, what in ((_by_tag, tag, "tag"), (_by_hook, hook, "hook name")):
        other = table.get(key)
        if other is not None and not _redefines(cls, other):
            fix = 'tag="..."' if what == "tag" else 'hook = "on_..." in the class body'
            raise ConfigError(
                f"event type {_name(cls)} cannot register: its {what} {key!r} is already "
                f"{_name(other)}'s; give it another: {fix}"
            )
    for table, key in ((_by_tag, tag), (_by_hook, hook)):
        other = table.get(key)
        if other is not None:  # the same class defined again: forget the old one entirely
            _forget(other)
    _by_tag[tag] = _by_hook[hook] = cls
    _refused.pop(cls, None)
    _refused_hooks.pop(hook, None)


def _checked(cls: type[BaseEvent]) -> tuple[str, str]:
    """Return ``cls``'s hook name and tag, or raise ConfigError saying what is wrong."""
    config = cls.__struct_config__
    where = f"event type {_name(cls)}"
    if not config.frozen:
        raise ConfigError(
            f"{where} is not frozen (it sets frozen=False); events are immutable records: "
            f"drop frozen=False"
        )
    if config.tag_field != "type":
        raise ConfigError(
            f"{where} has the tag field {config.tag_field!r}; every event's is 'type' "
            f"(BaseEvent's), so that one union decodes them all: drop tag_field="
        )
    if not isinstance(config.tag, str):
        raise ConfigError(f"{where} has the tag {config.tag!r}; a tag is a str: give tag='...'")
    hook = _hook_of(cls)
    if not isinstance(hook, str) or not _HOOK_NAME.fullmatch(hook):
        raise ConfigError(
            f"{where} has the hook name {hook!r}; a hook name is 'on_' and then lowercase "
            f"letters, digits and underscores, e.g. 'on_order_placed'"
        )
    if hook in RESERVED_HOOK_NAMES:
        raise ConfigError(
            f"{where} would have the hook name {hook!r}, which names an option "
            f"(Bus(on_error=...)); give it another: hook = 'on_...' (a class attribute)"
        )
    _check_live_args(cls, where)
    accepts = getattr(cls, "accepts_control", False)
    if not isinstance(accepts, bool):
        raise ConfigError(f"{where}: accepts_control must be True or False, got {accepts!r}")
    return hook, config.tag


def _check_live_args(cls: type[BaseEvent], where: str) -> None:
    live = getattr(cls, "live_args", ())
    if (
        not isinstance(live, tuple)
        or not all(isinstance(a, str) and a.isidentifier() for a in live)
        or len(set(live)) != len(live)
        or "event" in live
    ):
        raise ConfigError(
            f"{where}: live_args must be a tuple of distinct argument names other than "
            f"'event', e.g. ('request',), got {live!r}"
        )
    optional: object = getattr(cls, "optional_live_args", frozenset())
    if not isinstance(optional, frozenset) or not optional <= set(live):
        raise ConfigError(
            f"{where}: optional_live_args must be a frozenset of names among its live_args "
            f"{live!r}, got {optional!r}"
        )


def _hook_of(cls: type) -> Any:
    """The hook name ``cls`` gives in its own body, else the one derived from its name
    (``BaseEvent.__init_subclass__`` set it already)."""
    return cls.__dict__.get("hook", hook_name_of(cls.__name__))


def _redefines(cls: type, other: type) -> bool:
    """Whether ``cls`` is ``other`` defined again (same module and name; never a hook's)."""
    return (
        other not in _builtin
        and cls.__module__ == other.__module__
        and cls.__qualname__ == other.__qualname__
    )


def _forget(cls: type[BaseEvent]) -> None:
    for tag in [k for k, v in _by_tag.items() if v is cls]:
        del _by_tag[tag]
    for hook in [k for k, v in _by_hook.items() if v is cls]:
        del _by_hook[hook]


def _name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"
