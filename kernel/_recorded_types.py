"""Your event types in recordings: named in the header when written, never imported when read.

A Recorder lists, in its header, every event type of yours it records, by tag and by the
name it was defined under (``"shop.events:OrderPlaced"``). That name is for people and error
messages only: a recording is data, and importing the module it names would run whatever
code sits there (SPEC.md, "Data never names code"). A reader decodes events with the types
this process has defined, given to it (``types=``) or defined anyway, and nothing else.

An event of any other type, listed in the header or not, is unknown. The reader either
raises one RecordingError naming it and saying how to pass it, after the valid prefix (as
for damage), or, asked to, yields it as an ``UnknownEvent``: plain data, for ``inspect``.
"""

from __future__ import annotations

import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hookbus.events import HOOKS, BaseEvent, event_type, event_types, event_union

from ._errors import RecordingError

__all__ = ("RecordedTypes", "UnknownEvent", "type_names", "unknown_type_error", "user_types")

_SCRIPT_MODULES = ("__main__", "__mp_main__")
_ENVELOPE = ("type", "source", "seq")  # what every event's encoding has besides its fields


@dataclass(frozen=True)
class UnknownEvent:
    """Hold, as plain data, a recorded event whose type this process has not defined.

    ``read_recording(path, unknown="data")`` yields one where it would otherwise stop with a
    RecordingError. It is not an event: no bus publishes it, and ``replay`` refuses it with
    the error reading would have raised.
    """

    tag: str
    """The event's type tag, as recorded (``"order_placed"``)."""
    source: str
    seq: int
    fields: dict[str, Any]
    """Its other fields as decoded: dicts, lists, strings, numbers, numpy arrays."""
    type_name: str | None
    """The header's name for the type, ``"module:QualName"``; None if it does not list it."""
    offset: int
    """The byte offset of its frame or line in the file."""


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


class RecordedTypes:
    """What one file's events decode with, and what an event of no known type becomes."""

    def __init__(
        self, listed: Mapping[str, str], given: Iterable[object], keep_unknown: bool
    ) -> None:
        for cls in given:
            event_type(cls)  # a refused or foreign type says why, as everywhere
        self.union: Any = event_union()
        """Every type this process defined (the given ones among them): the decoding type."""
        self.known = frozenset(cls.__struct_config__.tag for cls in typing.get_args(self.union))
        self.listed = listed
        self.keep_unknown = keep_unknown
        """Whether an event of an unknown type is yielded as an UnknownEvent, or raises."""

    def unknown_event(self, raw: object, offset: int) -> UnknownEvent | None:
        """Return ``raw``, an event's encoding decoded as plain data, as an UnknownEvent if
        its type is unknown; None if it is no sound event of an unknown type (damage)."""
        if not isinstance(raw, dict) or not all(isinstance(key, str) for key in raw):
            return None
        tag, source, seq = raw.get("type"), raw.get("source", ""), raw.get("seq", 0)
        if not isinstance(tag, str) or tag in self.known:
            return None  # a known type that did not decode is damage
        if not isinstance(source, str) or type(seq) is not int:
            return None
        fields = {key: value for key, value in raw.items() if key not in _ENVELOPE}
        listed = self.listed.get(tag)
        return UnknownEvent(tag, source, seq, fields, listed, offset)


def unknown_type_error(event: UnknownEvent, file: str | None) -> RecordingError:
    """Return the error for ``event`` where an event of a known type was needed: it names
    the type and says how to pass it, with a ``--types`` value that works as printed."""
    where = f"{file!r} holds" if file is not None else "replay got"
    named = _well_formed(event.type_name)
    if event.type_name is None:
        what = f"an event of an unknown type (tag {event.tag!r}, which its header does not list)"
    else:
        shown = event.type_name if named else repr(event.type_name)
        what = f"an event of type {shown} (tag {event.tag!r}), which this process has not defined"
    return RecordingError(
        f"{where} {what}; reading a recording never imports what its header names, so pass "
        f"the type: {_hint(named)}",
        offset=event.offset,
        missing_type=event.type_name,
        unknown_tag=event.tag,
    )


def _well_formed(type_name: str | None) -> tuple[str, str] | None:
    """Return ``(module, qualname)`` if ``type_name`` is a dotted name, a colon, a dotted
    name; else None (it is then never echoed bare, nor offered as a path)."""
    module, colon, qualname = (type_name or "").partition(":")
    parts = [*module.split("."), *qualname.split(".")]
    return (module, qualname) if colon and all(p.isidentifier() for p in parts) else None


def _hint(named: tuple[str, str] | None) -> str:
    """Say how to pass the type, in Python and to the ``hookbus`` command.

    The command takes ``module:Class`` or ``path/to/file.py:Class``; but the ``hookbus``
    console script does not put the working folder on ``sys.path``, so ``orders:Class``
    fails even from the folder holding orders.py. The file form works from anywhere.
    """
    if named is None:
        return (
            "types=[TheType] (read_recording, replay, replay_into), or --types "
            "path/to/file.py:TheType to the hookbus command (the file that defines it)"
        )
    module, qualname = named
    python = f"types=[{qualname.rpartition('.')[2]}] (read_recording, replay, replay_into)"
    if module in _SCRIPT_MODULES:
        return (
            f"{python}, or --types path/to/script.py:{qualname} to the hookbus command (it "
            f"was defined in a script run as {module}, so only that script's path finds it)"
        )
    path = module.replace(".", "/") + ".py"
    also = "" if "." not in module else f"; --types {module}:{qualname} if it is installed"
    return (
        f"{python}, or --types {path}:{qualname} to the hookbus command (run from the folder "
        f"holding {path}, or give the path to it{also})"
    )
