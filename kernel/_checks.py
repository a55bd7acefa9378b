"""Refusing bad subscribers when they are added, never at their first event.

Everything here runs at registration (``Bus(...)``, ``bus.add_callbacks``, ``bus.subscribe``,
``config.callbacks(...)``), so the publish path stays as compiled in ``_chain``. A handler is
called with keyword arguments only: ``event`` and its hook's live arguments (``LIVE_ARGS``)
if it takes ``**kwargs``, else exactly those it names (as RLlib calls a plain function such
as ``f(algorithm, metrics_logger, result)``). So it may require nothing its hook does not
pass, and a required positional-only parameter can never be filled.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from hookbus.events import event_types

from ._callback import Callback, overridden_hooks
from ._chain import describe
from ._errors import ConfigError
from ._hooks import hook_name, live_args_of
from ._options import BusOptions

__all__ = (
    "as_list",
    "check_callback",
    "check_callbacks",
    "check_handler",
    "checked_callbacks",
)

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def check_callbacks(
    callbacks_class: object = None,
    *,
    on_error: str = "raise",
    plugins: bool | Sequence[str] = False,
    quarantine_after: int = 3,
    statistics: bool = False,
    deadline: float | None = None,
    watchdog: float | None = None,
    **hook_callables: Any,
) -> None:
    """Raise ConfigError for anything in these ``Bus(...)`` arguments that the bus would refuse.

    Takes what ``Bus(...)`` and ``config.callbacks(...)`` take. Classes are checked without
    being instantiated and plugins without being imported, so this has no side effects.
    """
    BusOptions.pick(locals())  # the options' checks
    for name, value in hook_callables.items():
        hook = hook_name(name)
        for fn in as_list(value):
            check_handler(fn, hook)
    checked_callbacks(callbacks_class)


def check_handler(fn: object, hook: str) -> Callable[..., Any]:
    """Return ``fn`` if the chain of ``hook`` can call it; else raise ConfigError saying why."""
    if not callable(fn):
        raise ConfigError(f"handler for {hook!r} must be callable, got {fn!r}")
    _check_signature(fn, hook, describe(fn))
    return fn


def check_callback(item: object, where: str = "callbacks_class") -> None:
    """Raise ConfigError unless ``item`` is a callback class or instance whose hooks fit.

    Accepted: a ``Callback`` subclass or instance, or any class or object with hook-named
    methods (duck typing). A class must be instantiable with no arguments, or be given as
    ``functools.partial(cls, *args, **kwargs)`` with its arguments (RLlib's examples do).
    ``where`` names the item in messages (``"callbacks_class[1]"``).
    """
    built_with_arguments = isinstance(item, functools.partial) and isinstance(item.func, type)
    if isinstance(item, functools.partial) and isinstance(item.func, type):
        cls = item.func
        try:
            inspect.signature(cls).bind(*item.args, **item.keywords)
        except TypeError as exc:
            raise ConfigError(
                f"{where}: cannot instantiate callback class {cls.__qualname__} with the "
                f"partial's arguments: {exc}"
            ) from None
        except ValueError:  # no signature to read: instantiation will tell
            pass
        item = cls
    if isinstance(item, type):
        hooks = _class_hooks(item)
        if not hooks and not issubclass(item, Callback):
            raise ConfigError(
                f"{where} must be a callback class or instance, got the class "
                f"{item.__qualname__}, which neither subclasses hookbus.kernel.Callback nor "
                f"defines a hook method ({_some_hooks()})"
            )
        if not built_with_arguments:
            _check_no_argument_constructor(item, where)
        for hook in hooks:
            method = inspect.getattr_static(item, hook)
            plain = inspect.isfunction(method)  # unbound: its first parameter is self
            _check_signature(getattr(item, hook), hook, f"{item.__qualname__}.{hook}", plain)
        return
    hooks = overridden_hooks(item)
    if not hooks and not isinstance(item, Callback):
        raise ConfigError(f"{where} must be a callback class or instance, got {_what(item)}")
    for hook in hooks:
        fn = getattr(item, hook)
        _check_signature(fn, hook, describe(fn))


def checked_callbacks(callbacks_class: object) -> list[object]:
    """Return ``callbacks_class`` (None, one item, a list or a tuple) as a list, each checked."""
    if not isinstance(callbacks_class, list | tuple):
        items = as_list(callbacks_class)
        for item in items:
            check_callback(item)
        return items
    for i, item in enumerate(callbacks_class):
        check_callback(item, f"callbacks_class[{i}]")
    return list(callbacks_class)


def as_list(value: object) -> list[Any]:
    """Return ``value`` as a list: None is empty, a list or tuple is itself, else one item."""
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return list(value)
    return [value]


# --- internals ------------------------------------------------------------------------------


def _class_hooks(cls: type) -> list[str]:
    """Return the hooks ``cls`` implements (hook-named callables other than Callback's no-ops)."""
    hooks = []
    for hook in event_types():
        method = getattr(cls, hook, None)
        if method is not None and method is not getattr(Callback, hook, None) and callable(method):
            hooks.append(hook)
    return hooks


def _check_no_argument_constructor(cls: type, where: str) -> None:
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):  # no signature to read (C types): instantiation will tell
        return
    required = [
        name
        for name, p in signature.parameters.items()
        if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    if required:
        raise ConfigError(
            f"{where}: cannot instantiate callback class {cls.__qualname__} with no arguments "
            f"(it requires {', '.join(map(repr, required))}); pass an instance instead, "
            f"e.g. {cls.__name__}(...)"
        )


def _check_signature(fn: Any, hook: str, name: str, unbound: bool = False) -> None:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # no signature to read (some builtins): accept
        return
    params = list(signature.parameters.values())
    if unbound and params and params[0].kind in _POSITIONAL:
        params = params[1:]  # self, bound when the class is instantiated
    given = ("event", *live_args_of(hook))
    problem = _mismatch(params, given, hook)
    if problem:
        raise ConfigError(
            f"handler {name} cannot take the arguments of {hook!r}: {problem}; handlers are "
            f"called with keyword arguments only, those they name of ({', '.join(given)}), "
            f"or all of them with **kwargs"
        )


def _mismatch(params: list[inspect.Parameter], given: tuple[str, ...], hook: str) -> str:
    """Say why a handler with ``params`` cannot be called with the keywords ``given``."""
    for p in params:
        if p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.kind is p.POSITIONAL_ONLY:
            return f"its parameter {p.name!r} is positional-only"
        if p.name not in given:
            return f"it requires {p.name!r}, which {hook!r} does not pass"
    return ""


def _some_hooks() -> str:
    return "on_episode_end, on_train_result, ...: the names in hookbus.events.HOOKS"


def _what(item: object) -> str:
    if isinstance(item, str):
        return (
            f"the string {item!r}; pass the class itself (e.g. from my_module import MyCb; "
            f"config.callbacks(MyCb)), not its name"
        )
    if callable(item):
        return (
            f"the callable {item!r}; pass plain callables per hook instead (e.g. on_episode_end=fn)"
        )
    return (
        f"{item!r} ({type(item).__qualname__}); pass a hookbus.kernel.Callback subclass, an "
        f"instance of one, or an object with hook methods ({_some_hooks()})"
    )
