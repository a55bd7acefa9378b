"""The base class of stateful class handlers (RLlib's ``RLlibCallback``)."""

from __future__ import annotations

import difflib
import functools
import inspect
import sys
import warnings
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any, ClassVar

from hookbus.events import HOOKS, BaseEvent, event_types

from ._errors import ConfigError, HookbusWarning, user_stacklevel

__all__ = ("Callback", "instantiate", "overridden_hooks", "warn_stray_hooks")


class Callback:
    """Subclass and override the hooks you need; each may be ``def`` or ``async def``.

    Every hook receives keyword arguments only (the base's ``*args`` only keeps type
    checkers happy with keyword-only overrides): ``event`` (the typed event) and the hook's
    live objects (SPEC.md's table); accept ``**kwargs`` so that new arguments never break
    you. A hook you do not override costs nothing: the class is not in that hook's chain.

    ``observer = True`` marks a class that watches every runner's events from the
    Algorithm's bus (a recorder, a tracer) rather than running where events happen.
    ``before`` / ``after`` / ``priority`` move its handlers within their chains;
    ``on_error`` sets their error policy (``"log"``, ...) and ``deadline`` their time limit,
    overriding the bus's.
    ``get_state()`` / ``set_state()`` make the instance's state part of checkpoints;
    ``close()`` runs when the bus closes.
    """

    observer: ClassVar[bool] = False
    before: ClassVar[Sequence[Any]] = ()
    """Run this class's handlers before these (handler names, Callback classes)."""
    after: ClassVar[Sequence[Any]] = ()
    """Run this class's handlers after these."""
    priority: ClassVar[int] = 0
    """Among handlers free to run, a higher priority runs earlier (docs/subscribing.md)."""
    on_error: ClassVar[str | None] = None
    """This class's error policy, overriding the bus's (None: the bus's; docs/errors.md)."""
    deadline: ClassVar[float | None] = None
    """Seconds each of its handlers may take (None: the bus's); async ones are cancelled."""

    def get_state(self) -> dict[str, Any] | None:
        """Return state to save in checkpoints (plain data and numpy arrays), or None."""
        return None

    def set_state(self, state: dict[str, Any]) -> None:
        """Restore what ``get_state()`` returned."""

    def close(self) -> None:
        """Release resources (files, connections); called once when the bus closes."""

    def wanted_hooks(self) -> Collection[str] | None:
        """Return the hooks to subscribe to among those overridden, or None for all of them."""
        return None


def _no_op(hook: str, event: type[BaseEvent]) -> Callable[..., Any]:
    """Return ``Callback``'s no-op for ``hook``, documented from its event type."""

    def handler(self: Callback, *args: Any, **kwargs: Any) -> Any:
        pass

    summary = (event.__doc__ or "").strip().splitlines()[0]
    when = summary.removeprefix("Publish ").rstrip(".")
    handler.__name__ = hook
    handler.__qualname__ = f"Callback.{hook}"
    handler.__doc__ = f"Handle ``{event.__name__}``, published {when}; see ``events``."
    return handler


# The hooks, as no-ops made from ``events.HOOKS`` (a hook is declared once, by its event
# type): overriding one puts the class in that hook's chain, and ``super().on_x(...)``
# works in every override.
for _hook, _event in HOOKS.items():
    setattr(Callback, _hook, _no_op(_hook, _event))
del _hook, _event


def overridden_hooks(callback: object) -> list[str]:
    """Return the hooks ``callback`` (an instance) implements, in SPEC.md's order, then
    those of your event types in the order they were defined.

    For a ``Callback`` subclass, a hook counts only if the class overrides the no-op; for any
    other object, every hook-named callable attribute counts (duck typing). A hook of your
    own counts also as an instance's attribute (a Recorder recording your events).
    ``wanted_hooks()`` narrows that down (a Recorder of chosen hooks).
    """
    cls = type(callback)
    wanted_hooks = getattr(callback, "wanted_hooks", None)
    wanted = wanted_hooks() if callable(wanted_hooks) else None
    hooks = []
    for hook in event_types():
        method = getattr(cls if hook in HOOKS else callback, hook, None)
        if method is None or method is getattr(Callback, hook, None):
            continue
        if callable(method) and (wanted is None or hook in wanted):
            hooks.append(hook)
    return hooks


def instantiate(items: Iterable[object]) -> list[object]:
    """Turn callback classes (checked already) into instances, and ``functools.partial``s of
    callback classes (RLlib's examples pass them) into theirs; instances pass through."""
    instances = []
    for item in items:
        if isinstance(item, functools.partial) and isinstance(item.func, type):
            item = item()
        elif isinstance(item, type):
            try:
                item = item()
            except TypeError as exc:
                raise ConfigError(
                    f"cannot instantiate callback class {item.__qualname__} with no arguments "
                    f"({exc}); pass an instance instead"
                ) from exc
            # A class's hooks were checked unbound; an instance may add its own attributes.
        instances.append(item)
    return instances


def warn_stray_hooks(callback: object) -> None:
    """Warn about ``on_*`` methods that look like misspelt hooks (they would never run)."""
    known = event_types()
    for name in dir(type(callback)):
        if name.startswith("on_") and name not in known and callable(getattr(callback, name)):
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            method = f"{type(callback).__qualname__}.{name}"
            message = f"{method} is not a hook and will never be called{hint}"
            where = _definition(type(callback), name)
            if where is None:  # no source to point at: the user's call that added it
                warnings.warn(message, HookbusWarning, stacklevel=user_stacklevel())
                continue
            # The class's module's registry, as warnings.warn keeps one per module: a class
            # added twice (config.callbacks(), then build()) warns once.
            module = sys.modules.get(where[2])
            registry = vars(module).setdefault("__warningregistry__", {}) if module else None
            warnings.warn_explicit(message, HookbusWarning, *where, registry=registry)


def _definition(cls: type, name: str) -> tuple[str, int, str] | None:
    """Return (file, line, module) of method ``name`` of ``cls``, else of ``cls`` itself.

    A stray hook's warning points there, at the user's class, whichever call added it (the
    CLI's ``main()``, ``Bus(...)``, ``config.callbacks(...)``, a worker process building
    the bus): the call's own line says nothing about which class has the typo.
    """
    code = getattr(inspect.unwrap(getattr(cls, name)), "__code__", None)
    if code is not None:
        return code.co_filename, code.co_firstlineno, cls.__module__
    try:
        lines, first = inspect.getsourcelines(cls)
        file = inspect.getsourcefile(cls)
    except (OSError, TypeError):  # defined in a REPL or built by type(): no source
        return None
    if file is None or not lines:
        return None
    return file, first, cls.__module__
