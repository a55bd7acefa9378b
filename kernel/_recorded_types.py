"""Your event types in recordings: named in the header when written, found again when read.

A Recorder lists, in its header, every event type of yours it records, by tag and by the
name it is importable under (``"shop.events:OrderPlaced"``). A reader decodes them with
the types this process has defined (given to it, or defined anyway), and imports the
others by those names. An event of a type it cannot find is one ``RecordingError`` naming
the type, at that event: the valid prefix before it was read, as for any damage.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from typing import Any

from hookbus.events import HOOKS, BaseEvent, event_type, event_types, event_union

from ._errors import RecordingError

__all__ = ("decoding_type", "missing_type", "type_names", "user_types")


def user_types(hooks: Iterable[str] | None) -> list[type[BaseEvent]]:
    """Return the event types of yours among ``hooks`` (all of them for None)."""
    chosen = None if hooks is None else set(hooks)
    return [
        cls
        for hook, cls in event_types().items()
        if hook not in HOOKS and (chosen is None or hook in chosen)
    ]


def type_names(types: Iterable[type[BaseEvent]]) -> dict[str, str]:
    """Return the header's ``event_types``: tag -> ``"module:QualName"``."""
    return {str(cls.__struct_config__.tag): f"{cls.__module__}:{cls.__qualname__}" for cls in types}


def decoding_type(
    recorded: Mapping[str, str], given: Iterable[object]
) -> tuple[Any, dict[str, str]]:
    """Return the union that decodes a file whose header lists ``recorded`` types, and the
    types it cannot find (tag -> what went wrong).

    ``given`` are event types the caller passes (checked: ConfigError if one is not);
    every type this process defined counts too, and the others are imported by the names
    the header records. A type still missing is an error only when an event of it comes
    (``missing_type``): a Recorder lists every type of yours defined when it was made,
    whether or not any event of it was published.
    """
    for cls in given:
        event_type(cls)  # a refused or foreign type says why, as everywhere
    missing = {}
    for tag, where in recorded.items():
        if tag not in _tags():
            problem = _import(where)
            if problem is None and tag not in _tags():
                problem = "it defines no event type with that tag"
            if problem is not None:
                missing[tag] = f"{where} (tag {tag!r}): {problem}"
    return event_union(), missing


def missing_type(
    tag: object, missing: Mapping[str, str], name: str, offset: int
) -> RecordingError | None:
    """Return the error for an event of a type the header lists but this process cannot
    find, or None if ``tag`` is no such type (the frame is then simply undecodable)."""
    if not isinstance(tag, str) or tag not in missing:
        return None
    where = missing[tag].split(" (tag")[0]
    return RecordingError(
        f"{name!r} holds events of a type this process cannot find: {missing[tag]}. Import "
        f"it before reading, or pass it: read_recording(path, types=[...]), replay(path, "
        f"..., types=[...]), hookbus inspect --types {where} (or path/to/file.py:Class)",
        offset=offset,
        missing_type=where,
    )


def _tags() -> set[Any]:
    return {cls.__struct_config__.tag for cls in event_types().values()}


def _import(where: str) -> str | None:
    """Import the module of ``"module:QualName"``; return what went wrong, or None."""
    module, _, _ = where.partition(":")
    if module in ("", "__main__", "__mp_main__"):
        return "it was defined in a script run as __main__, which is no module to import"
    try:
        importlib.import_module(module)
    except Exception as exc:  # any import failure: the user's module, not ours
        return f"importing {module!r} failed ({type(exc).__name__}: {exc})"
    return None
