"""Recording event streams to files, and reading them back, torn tails included.

Two formats, both streams of events after a header:

- ``msgpack``: the magic ``b"HOOKBUS\\x00"``, then frames. A frame is a 4-byte little-endian
  body length, the body's 4-byte CRC-32, and the body: MessagePack of the header (first
  frame) or of one event. A torn or corrupt frame is detected by its length or its CRC.
- ``jsonl``: one JSON object per line, the header first. A torn last line has no newline.

Events are buffered in memory and written at every ``on_sample_end`` and ``on_train_result``
(and when the buffer passes 1 MiB, and at close), so the hot path only encodes.
"""

from __future__ import annotations

import hashlib
import os
import struct
import zlib
from collections.abc import Collection, Iterator
from importlib.metadata import PackageNotFoundError, version
from typing import Any, BinaryIO, Literal

import msgspec

from hookbus.events import HOOKS, BaseEvent, Event, codec

from ._callback import Callback
from ._errors import ConfigError, RecordingError
from ._hooks import hook_name

__all__ = (
    "FORMAT_VERSION",
    "MAGIC",
    "Recorder",
    "RecordingHeader",
    "read_recording",
    "read_recording_header",
    "schema_fingerprint",
)

MAGIC = b"HOOKBUS\x00"
FORMAT_VERSION = 2
"""The recording format this hookbus writes and reads. Version 2: the step that ends an
episode is an ``EpisodeStep`` (with ``terminated``/``truncated``) followed by an ``EpisodeEnd``
without step data; version 1 files put that step in ``EpisodeEnd`` and would replay wrong."""
_HEAD = struct.Struct("<II")  # body length, CRC-32 of the body (both little-endian)
_FRAME_HEAD = _HEAD.size
_HEAD_PLACEHOLDER = bytes(_FRAME_HEAD)
_FLUSH_AT = 1 << 20
_READ_CHUNK = 1 << 20
Format = Literal["msgpack", "jsonl"]
FORMATS: tuple[Format, ...] = ("msgpack", "jsonl")


class RecordingHeader(msgspec.Struct, frozen=True, kw_only=True):
    """What a recording says about itself."""

    format: str = "hookbus-recording"
    format_version: int = FORMAT_VERSION
    hookbus_version: str = ""
    schema: str = ""
    """Fingerprint of the event schema that wrote the file (see ``schema_fingerprint``)."""
    hooks: list[str] | None = None
    """The hooks recorded, or None for all."""

    def schema_is_current(self) -> bool:
        """Return whether the file's events have this hookbus's event schema.

        When they do not, the file was written by a hookbus whose event types differ; it
        still reads as long as the changes only added fields with defaults.
        """
        return self.schema == schema_fingerprint()


def schema_fingerprint() -> str:
    """Return a short hash of the event types' JSON schema: it changes when events change."""
    schema = msgspec.json.encode(msgspec.json.schema(Event))
    return hashlib.sha256(schema).hexdigest()[:16]


def _hookbus_version() -> str:
    try:
        return version("hookbus")
    except PackageNotFoundError:  # pragma: no cover - running from a bare source tree
        return "unknown"


class Recorder(Callback):
    """Append every event (or those of ``hooks``) to ``path``, as msgpack or JSON lines.

    An observer: with worker processes it records on the Algorithm's bus, receiving every
    runner's events in order per source. It never changes what other handlers see.
    Close it (or the bus, or ``algo.stop()``) to write the last events.
    """

    observer = True

    def __init__(
        self,
        path: str | os.PathLike[str],
        hooks: Collection[str] | None = None,
        format: str = "msgpack",
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
        self.events_written = 0
        self._buffer = bytearray()
        self._encoder = codec.msgpack_encoder()
        self._file: BinaryIO | None = open(self.path, "wb")
        header = RecordingHeader(
            hookbus_version=_hookbus_version(), schema=schema_fingerprint(), hooks=self.hooks
        )
        if format == "msgpack":
            self._buffer += MAGIC
            self._append_frame(header)
        else:
            self._buffer += codec.encode_json(header) + b"\n"
        self.flush()

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
        self._encoder.encode_into(obj, buffer, start + _FRAME_HEAD)
        view = memoryview(buffer)
        crc = zlib.crc32(view[start + _FRAME_HEAD :])
        view.release()  # before the buffer next grows
        _HEAD.pack_into(buffer, start, len(buffer) - start - _FRAME_HEAD, crc)

    def record(self, *, event: BaseEvent, **kwargs: Any) -> None:
        """Append ``event`` to the buffer (every hook's handler)."""
        if self._jsonl:
            self._buffer += codec.encode_json(event) + b"\n"
        else:
            self._append_frame(event)
        self.events_written += 1
        if len(self._buffer) >= _FLUSH_AT:
            self.flush()

    def record_and_flush(self, *, event: BaseEvent, **kwargs: Any) -> None:
        """Append ``event`` and write the buffer out (sample ends and train results)."""
        self.record(event=event)
        self.flush()

    on_algorithm_init = record
    on_evaluate_start = record
    on_evaluate_end = record
    on_checkpoint_loaded = record
    on_env_runners_recreated = record
    on_environment_created = record
    on_episode_created = record
    on_episode_start = record
    on_episode_step = record
    on_episode_end = record
    on_postprocess_trajectory = record
    on_sample_end = record_and_flush
    on_train_result = record_and_flush

    def flush(self) -> None:
        """Write buffered events to the file."""
        if self._file is not None and self._buffer:
            self._file.write(self._buffer)
            self._file.flush()
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
            _buffer=bytearray(),
            _file=None,
            _encoder=codec.msgpack_encoder(),
            _jsonl=state["format"] == "jsonl",
        )

    def __repr__(self) -> str:
        return f"Recorder({self.path!r}, hooks={self.hooks!r}, format={self.format!r})"


# --- reading --------------------------------------------------------------------------------


def read_recording_header(path: str | os.PathLike[str]) -> RecordingHeader:
    """Return a recording's header; raise RecordingError at once if it is not one we read."""
    with open(path, "rb") as file:
        header: RecordingHeader = next(_reader_for(file, os.fspath(path)))
        return header


def read_recording(
    path: str | os.PathLike[str], hooks: Collection[str] | None = None
) -> Iterator[BaseEvent]:
    """Yield a recording's events in order (those of ``hooks``, if given), streaming.

    Memory stays constant whatever the file's size. A corrupt or truncated file yields its
    valid prefix, then raises RecordingError whose ``offset`` is the first bad byte.
    """
    wanted = None if hooks is None else {HOOKS[hook_name(h)] for h in hooks}
    with open(path, "rb") as file:
        reader = _reader_for(file, os.fspath(path))
        next(reader)  # the header
        for event in reader:
            if wanted is None or type(event) in wanted:
                yield event


def _reader_for(file: BinaryIO, name: str) -> Iterator[Any]:
    start = file.read(len(MAGIC))
    if start == MAGIC:
        return _read_msgpack(file, name)
    if start[:1] == b"{":
        file.seek(0)
        return _read_jsonl(file, name)
    raise RecordingError(f"{name!r} is not a hookbus recording (unknown leading bytes)", offset=0)


def _check_header(header: Any, name: str, offset: int) -> RecordingHeader:
    if not isinstance(header, dict) or header.get("format") != "hookbus-recording":
        raise RecordingError(f"{name!r} is not a hookbus recording (no header)", offset=offset)
    # The version first: a header of another version may not even convert.
    version = header.get("format_version")
    if version != FORMAT_VERSION:
        written_by = header.get("hookbus_version")
        by = f" (written by hookbus {written_by})" if written_by else ""
        newer = isinstance(version, int) and version > FORMAT_VERSION
        fix = "upgrade hookbus to read it" if newer else "record the run again to replay it"
        raise RecordingError(
            f"{name!r} has recording format version {version!r}{by}; this hookbus "
            f"({_hookbus_version()}) reads version {FORMAT_VERSION} only; {fix}",
            offset=offset,
        )
    try:
        return msgspec.convert(header, RecordingHeader)
    except msgspec.ValidationError as exc:
        raise RecordingError(f"{name!r}: bad recording header ({exc})", offset=offset) from exc


def _read_msgpack(file: BinaryIO, name: str) -> Iterator[Any]:
    decoder = codec.msgpack_decoder(Event)
    any_decoder = codec.msgpack_decoder()
    buffer = b""
    pos = 0  # position of buffer[0] in the file
    offset = len(MAGIC)  # file offset of the next frame
    first = True
    eof = False
    while True:
        # Parse every whole frame in the buffer (through a view: no copies); then read more.
        at = offset - pos
        view = memoryview(buffer)
        while len(buffer) - at >= _FRAME_HEAD:
            size = int.from_bytes(view[at : at + 4], "little")
            end = at + _FRAME_HEAD + size
            if end > len(buffer):
                break
            body = view[at + _FRAME_HEAD : end]
            if zlib.crc32(body) != int.from_bytes(view[at + 4 : at + 8], "little"):
                raise RecordingError(f"{name!r}: corrupt frame (checksum mismatch)", offset=offset)
            try:
                item = any_decoder.decode(body) if first else decoder.decode(body)
            except (msgspec.DecodeError, codec.CodecError) as exc:
                raise RecordingError(f"{name!r}: undecodable frame ({exc})", offset=offset) from exc
            if first:
                item = _check_header(item, name, offset)
                first = False
            yield item
            offset += _FRAME_HEAD + size
            at = end
        if eof:
            if offset - pos < len(buffer) or first:
                what = "no header" if first else "truncated frame"
                raise RecordingError(f"{name!r}: {what} at the end of the file", offset=offset)
            return
        chunk = file.read(_READ_CHUNK)
        eof = not chunk
        buffer = buffer[at:] + chunk
        pos = offset


def _read_jsonl(file: BinaryIO, name: str) -> Iterator[Any]:
    decoder = msgspec.json.Decoder()
    offset = 0
    first = True
    for line in file:
        if not line.endswith(b"\n"):
            raise RecordingError(f"{name!r}: truncated last line", offset=offset)
        try:
            if first:
                yield _check_header(decoder.decode(line), name, offset)
                first = False
            else:
                yield codec.decode_json(line, Event)
        except (msgspec.DecodeError, codec.CodecError) as exc:
            raise RecordingError(f"{name!r}: undecodable line ({exc})", offset=offset) from exc
        offset += len(line)
    if first:
        raise RecordingError(f"{name!r}: empty recording (no header)", offset=0)
