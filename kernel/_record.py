"""Recording event streams to files (the file format is in ``_format``; reading in ``_read``).

Events are buffered in memory and written at every ``on_sample_end`` and ``on_train_result``
(and when the buffer passes 1 MiB, and at close), so the hot path only encodes.

A Recorder writes only what its reader reads back: an event bigger than ``MAX_FRAME_SIZE``
or nesting deeper than ``MAX_DEPTH`` is refused, and nothing of it is written. (Floats JSON
cannot hold, NaN and infinities, the codec writes as stand-ins that read back as floats.)
"""

from __future__ import annotations

import datetime
import decimal
import os
import uuid
import zlib
from collections.abc import Collection
from typing import Any, BinaryIO, NoReturn

import msgspec

from hookbus.events import HOOKS, BaseEvent, codec

from ._callback import Callback
from ._errors import ConfigError, RecordingError
from ._format import (
    CRC_SUFFIX_SIZE,
    FORMATS,
    HEAD,
    LINE_END,
    MAGIC,
    MAX_DEPTH,
    MAX_FRAME_SIZE,
    RecordingHeader,
    hookbus_version,
    schema_fingerprint,
)
from ._hooks import hook_name
from ._recorded_types import type_names, user_types

__all__ = ("Recorder",)

_FRAME_HEAD = HEAD.size
_HEAD_PLACEHOLDER = bytes(_FRAME_HEAD)
_FLUSH_AT = 1 << 20


class Recorder(Callback):
    """Append every event (or those of ``hooks``) to ``path``, as msgpack or JSON lines.

    An observer: with worker processes it records on the Algorithm's bus, receiving every
    runner's events in order per source. It never changes what other handlers see.
    Close it (or the bus, or ``algo.stop()``) to write the last events.

    Events of your own types are recorded too: those defined when the Recorder is made
    (all, or those among ``hooks``), listed by name in the file's header so that a reader
    can import them. ``producer`` (and its ``producer_version``) names the framework
    whose run it records, for a bridge (the header's ``producer``).
    """

    observer = True

    def __init__(
        self,
        path: str | os.PathLike[str],
        hooks: Collection[str] | None = None,
        format: str = "msgpack",
        *,
        producer: str = "",
        producer_version: str = "",
    ) -> None:
        super().__init__()
        if format not in FORMATS:
            raise ConfigError(
                f"unknown recording format {format!r}; allowed: {', '.join(map(repr, FORMATS))}"
            )
        self.path = os.fspath(path)
        self.format = format
        self._jsonl = format == "jsonl"
        self.hooks = None if hooks is None else [hook_name(h) for h in hooks]
        self._own_hooks()
        self.events_written = 0
        self._flushed = 0  # bytes written to the file: where the buffer starts in it
        self._buffer = bytearray()
        self._encoder = codec.msgpack_encoder()
        self._file: BinaryIO | None = open(self.path, "wb")
        header = RecordingHeader(
            hookbus_version=hookbus_version(),
            schema=schema_fingerprint(),
            hooks=self.hooks,
            event_types=type_names(self.types),
            producer=producer,  # a bridge's framework: whose reduce cycle a replay follows
            producer_version=producer_version,
        )
        if format == "msgpack":
            self._buffer += MAGIC
            self._append_frame(header)
        else:
            self._append_line(codec.encode_json(header), header)
        self.flush()

    def _own_hooks(self) -> None:
        # A handler per event type of yours, as an attribute of this instance (the hooks'
        # handlers are the class's, below): the bus finds it by the type's hook name.
        self.types = user_types(self.hooks)
        """The event types of yours this Recorder records (those its header lists)."""
        for cls in self.types:
            setattr(self, cls.hook, self.record)

    def wanted_hooks(self) -> Collection[str] | None:
        """Subscribe to the chosen hooks only (no events are built for the others)."""
        return self.hooks

    # --- recording (the hot path) -----------------------------------------------------------

    def _append_frame(self, obj: Any) -> None:
        # Reserve the frame head, encode the body right after it, then fill the head in:
        # no intermediate bytes object for the body.
        buffer = self._buffer
        start = len(buffer)
        buffer += _HEAD_PLACEHOLDER
        try:
            self._encoder.encode_into(obj, buffer, start + _FRAME_HEAD)
        except Exception as exc:  # an int beyond 64 bits in an info dict, an unknown type
            del buffer[start:]  # msgspec leaves what it encoded so far: none of it is kept
            raise _not_encoded(obj, exc) from exc
        size = len(buffer) - start - _FRAME_HEAD
        if size > MAX_FRAME_SIZE:
            del buffer[start:]  # nothing of it reaches the file
            self._refuse(obj, size, start)
        view = memoryview(buffer)
        crc = zlib.crc32(view[start + _FRAME_HEAD :])
        # A level of nesting takes a byte at least: most events are too short to look at.
        may_nest = size > MAX_DEPTH and _msgpack_may_nest(view[start + _FRAME_HEAD :])
        view.release()  # before the buffer next grows
        if may_nest and _too_deep(obj):
            del buffer[start:]
            self._refuse_nesting(obj, start)
        HEAD.pack_into(buffer, start, size, crc)

    def _append_line(self, json: bytes, obj: Any) -> None:
        # The object without its closing brace, then its checksum member: two appends and
        # no copy of the JSON in between.
        size = len(json) - 1 + CRC_SUFFIX_SIZE
        if size > MAX_FRAME_SIZE:
            self._refuse(obj, size, len(self._buffer))
        with memoryview(json) as view:
            self._buffer += view[:-1]
        self._buffer += LINE_END % zlib.crc32(json)

    def record(self, *, event: BaseEvent, **kwargs: Any) -> None:
        """Append ``event`` to the buffer (every hook's handler)."""
        if self._jsonl:
            json = codec.encode_json(event)
            # A level of nesting takes two bytes at least ("[" and "]"): most events are
            # too short to look at.
            if len(json) > 2 * MAX_DEPTH and _json_may_nest(json) and _too_deep(event):
                self._refuse_nesting(event, len(self._buffer))
            self._append_line(json, event)
        else:
            self._append_frame(event)
        self.events_written += 1
        if len(self._buffer) >= _FLUSH_AT:
            self.flush()

    def _refuse(self, event: Any, size: int, at: int) -> NoReturn:
        # A file the reader would refuse is never written: the event is dropped, loudly.
        raise RecordingError(
            f"cannot record {type(event).__name__} ({getattr(event, 'hook', 'header')}) in "
            f"{self.path!r}: it takes {size:,} bytes as {self.format}, more than "
            f"MAX_FRAME_SIZE ({MAX_FRAME_SIZE:,}); it was not written",
            offset=self._flushed + at,
        )

    def _refuse_nesting(self, event: Any, at: int) -> NoReturn:
        field = _deepest_field(event)
        where = f"its field {field!r} nests" if field else "it nests"
        raise RecordingError(
            f"cannot record {type(event).__name__} ({getattr(event, 'hook', 'header')}) in "
            f"{self.path!r}: {where} containers (dicts, lists, ...) deeper than MAX_DEPTH "
            f"({MAX_DEPTH} levels, the event's own included), more than a reader is sure to "
            "read back; it was not written",
            offset=self._flushed + at,
        )

    def record_and_flush(self, *, event: BaseEvent, **kwargs: Any) -> None:
        """Append ``event`` and write the buffer out (sample ends and train results)."""
        self.record(event=event)
        self.flush()

    def flush(self) -> None:
        """Write buffered events to the file."""
        if self._file is not None and self._buffer:
            self._file.write(self._buffer)
            self._file.flush()
            self._flushed += len(self._buffer)
        self._buffer.clear()  # a detached copy (in a worker process) just drops them

    def close(self) -> None:
        """Write what is buffered and close the file (idempotent)."""
        if self._file is not None:
            self.flush()
            self._file.close()
            self._file = None

    # A Recorder pickled into a worker process's config must not carry the open file there.
    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "format": self.format, "hooks": self.hooks}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(
            state,
            events_written=0,
            _flushed=0,
            _buffer=bytearray(),
            _file=None,
            _encoder=codec.msgpack_encoder(),
            _jsonl=state["format"] == "jsonl",
        )
        self._own_hooks()

    def __repr__(self) -> str:
        return f"Recorder({self.path!r}, hooks={self.hooks!r}, format={self.format!r})"


# Every hook records (its handler is the class's, so the bus sees it as overridden); those
# that end a batch of work also write the buffer out, so a crash loses at most one batch.
_FLUSHED_AT = frozenset({"on_sample_end", "on_train_result"})
for _hook in HOOKS:
    setattr(Recorder, _hook, Recorder.record_and_flush if _hook in _FLUSHED_AT else Recorder.record)
del _hook


# --- nesting ------------------------------------------------------------------------------
# Depth is measured only when the encoded bytes allow a deep event: a cheap upper bound first
# (what could open a container), then the exact depth of the value (rare: a long event).

# MessagePack's container heads: fixmap, fixarray, array 16/32, map 16/32.
_CONTAINER_HEADS = {*range(0x80, 0xA0), *range(0xDC, 0xE0)}
_OTHER_BYTES = bytes(b for b in range(256) if b not in _CONTAINER_HEADS)
# Counting bytes costs per byte (about 1 µs per KiB), the exact look per value (a few µs):
# a longer event is looked at without counting.
_COUNTED_UP_TO = 1024


def _msgpack_may_nest(body: memoryview) -> bool:
    """Return whether ``body`` has bytes enough that could open more than MAX_DEPTH levels."""
    if len(body) > _COUNTED_UP_TO:
        return True
    return len(bytes(body).translate(None, _OTHER_BYTES)) > MAX_DEPTH


def _json_may_nest(json: bytes) -> bool:
    if len(json) > _COUNTED_UP_TO:
        return True
    return json.count(b"{") + json.count(b"[") > MAX_DEPTH


# Values to_builtins may keep as they are: leaves, never copied (bytes stay bytes).
_KEPT = (
    bytes,
    bytearray,
    memoryview,
    datetime.datetime,
    datetime.date,
    datetime.time,
    datetime.timedelta,
    uuid.UUID,
    decimal.Decimal,
)


def _leaf(obj: Any) -> None:
    return None  # a numpy value: bytes in the file, however it is shaped


def _depth_over(obj: Any, room: int) -> bool:
    """Return whether ``obj`` (plain data) nests containers more than ``room`` deep."""
    kind = type(obj)
    if kind is not dict and kind is not list:
        return False
    if room == 0:
        return True
    for value in obj.values() if kind is dict else obj:
        if _depth_over(value, room - 1):
            return True
    return False


def _too_deep(obj: Any) -> bool:
    # Plain data as the encoders see it: Structs, dataclasses, tuples and sets are dicts
    # and lists; numpy values are leaves.
    return _depth_over(msgspec.to_builtins(obj, builtin_types=_KEPT, enc_hook=_leaf), MAX_DEPTH)


def _deepest_field(event: Any) -> str | None:
    """Return the name of the first field of ``event`` that makes it too deep, if any."""
    fields = getattr(event, "__struct_fields__", ())
    tree = msgspec.to_builtins(event, builtin_types=_KEPT, enc_hook=_leaf)
    if type(tree) is not dict:
        return None
    return next((f for f in fields if _depth_over(tree.get(f), MAX_DEPTH - 1)), None)


def _not_encoded(obj: Any, exc: Exception) -> codec.CodecError:
    if isinstance(exc, codec.CodecError):
        return exc
    return codec.CodecError(
        f"cannot record {type(obj).__name__} ({getattr(obj, 'hook', 'header')}): {exc}"
    )
