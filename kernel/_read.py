"""Reading recordings back: streaming, in bounded memory, torn tails and damage included.

Every file is untrusted. Whatever is wrong with one (a torn tail, a flipped bit, a frame
announcing gigabytes, bytes that do not decode), reading yields the valid prefix and then
raises RecordingError whose ``offset`` is where the bad frame or line starts. The work is
linear in the file's size, and memory is bounded by ``MAX_FRAME_SIZE`` whatever the file
claims. The format itself is described in ``_format``.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator
from io import BufferedReader
from typing import Any, Literal, NoReturn, overload

import msgspec

from hookbus.events import BaseEvent, codec

from ._errors import ConfigError, RecordingError
from ._format import (
    CRC_KEY,
    CRC_SUFFIX_SIZE,
    HEAD,
    MAGIC,
    MAX_FRAME_SIZE,
    READ_VERSIONS,
    RecordingHeader,
    hookbus_version,
)
from ._hooks import event_type_for
from ._recorded_types import RecordedTypes, UnknownEvent, unknown_type_error

__all__ = ("read_recording", "read_recording_header")

_FRAME_HEAD = HEAD.size
_READ_CHUNK = 1 << 20
# What decoding untrusted bytes may raise: msgspec's errors (ValidationError included), the
# codec's (a malformed numpy payload), invalid UTF-8 in a string, and nesting deeper than
# the stack. Nothing else is caught: anything more is a bug to see, not damage to report.
_DECODE_ERRORS = (msgspec.DecodeError, codec.CodecError, UnicodeDecodeError, RecursionError)


def read_recording_header(path: str | os.PathLike[str]) -> RecordingHeader:
    """Return a recording's header; raise RecordingError at once if it is not one we read."""
    with open(path, "rb") as file:
        header: RecordingHeader = next(_reader_for(file, os.fspath(path)))
        return header


@overload
def read_recording(
    path: str | os.PathLike[str],
    hooks: Collection[str] | None = None,
    *,
    types: Iterable[type[BaseEvent]] = (),
    unknown: Literal["raise"] = "raise",
) -> Iterator[BaseEvent]: ...


@overload
def read_recording(
    path: str | os.PathLike[str],
    hooks: Collection[str] | None = None,
    *,
    types: Iterable[type[BaseEvent]] = (),
    unknown: Literal["data"],
) -> Iterator[BaseEvent | UnknownEvent]: ...


def read_recording(
    path: str | os.PathLike[str],
    hooks: Collection[str] | None = None,
    *,
    types: Iterable[type[BaseEvent]] = (),
    unknown: Literal["raise", "data"] = "raise",
) -> Iterator[BaseEvent | UnknownEvent]:
    """Yield a recording's events in order (those of ``hooks``, if given), streaming.

    Memory stays bounded whatever the file's size or content. A corrupt or truncated file
    yields its valid prefix, then raises RecordingError whose ``offset`` is the first bad
    frame's (or line's) first byte. Events of your own types decode as those types: the
    ones given in ``types`` or defined in this process anyway. Reading never imports
    anything, whatever the header names. An event of a type this process has not defined
    raises a RecordingError naming it, at that event; with ``unknown="data"`` it comes as
    an ``UnknownEvent`` instead, whatever ``hooks`` says (its hook is not recorded).
    """
    if unknown not in ("raise", "data"):
        raise ConfigError(f"unknown= takes 'raise' or 'data', not {unknown!r}")
    given = list(types)
    with open(path, "rb") as file:
        reader = _reader_for(file, os.fspath(path), given, keep_unknown=unknown == "data")
        next(reader)  # the header
        # An UnknownEvent's hook is not in the file: no hook can be told to leave it out.
        wanted = None if hooks is None else {event_type_for(h) for h in hooks} | {UnknownEvent}
        for event in reader:
            if wanted is None or type(event) in wanted:
                yield event


def _reader_for(
    file: BufferedReader, name: str, types: list[Any] | None = None, keep_unknown: bool = False
) -> Iterator[Any]:
    """Return an iterator of the header, then the events (decoded with ``types`` too)."""
    start = file.read(len(MAGIC))
    if start == MAGIC:
        return _read_msgpack(file, name, types or [], keep_unknown)
    if start[:1] == b"{":
        file.seek(0)
        return _read_jsonl(file, name, types or [], keep_unknown)
    raise RecordingError(f"{name!r} is not a hookbus recording (unknown leading bytes)", offset=0)


def _plain(decode: Callable[[Any], Any], body: Any) -> Any:
    """Return ``body`` decoded as plain data, or None if it does not even decode so."""
    try:
        return decode(body)
    except _DECODE_ERRORS:
        return None


def _not_decoded(
    types: RecordedTypes, plain: Any, name: str, what: str, offset: int, exc: Exception
) -> UnknownEvent:
    """Return the UnknownEvent a frame (or line) that did not decode holds, if the reader
    keeps them; else raise the RecordingError it is: an unknown type, or damage."""
    unknown = types.unknown_event(plain, offset)
    if unknown is None:
        raise RecordingError(f"{name!r}: undecodable {what} ({exc})", offset=offset) from exc
    if not types.keep_unknown:
        raise unknown_type_error(unknown, name) from exc
    return unknown


def _check_header(header: Any, name: str, offset: int) -> RecordingHeader:
    if not isinstance(header, dict) or header.get("format") != "hookbus-recording":
        raise RecordingError(f"{name!r} is not a hookbus recording (no header)", offset=offset)
    # The version first: a header of another version may not even convert.
    version = header.get("format_version")
    if version not in READ_VERSIONS:
        written_by = header.get("hookbus_version")
        by = f" (written by hookbus {written_by})" if written_by else ""
        newer = isinstance(version, int) and version > max(READ_VERSIONS)
        fix = "upgrade hookbus to read it" if newer else "record the run again to replay it"
        versions = " and ".join(map(str, READ_VERSIONS))
        raise RecordingError(
            f"{name!r} has recording format version {version!r}{by}; this hookbus "
            f"({hookbus_version()}) reads versions {versions}; {fix}",
            offset=offset,
        )
    try:
        return msgspec.convert(header, RecordingHeader)
    except msgspec.ValidationError as exc:
        raise RecordingError(f"{name!r}: bad recording header ({exc})", offset=offset) from exc


# --- msgpack --------------------------------------------------------------------------------


def _read_msgpack(
    file: BufferedReader, name: str, given: list[Any], keep_unknown: bool
) -> Iterator[Any]:
    any_decoder = codec.msgpack_decoder()
    decoder = any_decoder  # the events' own, made once the header says what they may be
    types: RecordedTypes | None = None  # known once the header is read
    buffer = b""
    pos = 0  # position of buffer[0] in the file
    offset = len(MAGIC)  # file offset of the next frame
    first = True
    eof = False
    while True:
        # The fast path: parse every whole frame in the buffer, through a view (no copies).
        at = offset - pos
        view = memoryview(buffer)
        while len(buffer) - at >= _FRAME_HEAD:
            size, crc = HEAD.unpack_from(view, at)
            end = at + _FRAME_HEAD + size
            if end > len(buffer) or size > MAX_FRAME_SIZE:
                break  # read more, or refuse it, below
            body = view[at + _FRAME_HEAD : end]
            if zlib.crc32(body) != crc:
                raise RecordingError(f"{name!r}: corrupt frame (checksum mismatch)", offset=offset)
            try:
                item = any_decoder.decode(body) if first else decoder.decode(body)
            except _DECODE_ERRORS as exc:
                if types is None:  # the header
                    raise RecordingError(
                        f"{name!r}: undecodable frame ({exc})", offset=offset
                    ) from exc
                plain = _plain(any_decoder.decode, body)
                item = _not_decoded(types, plain, name, "frame", offset, exc)
            if first:
                item = _check_header(item, name, offset)
                first = False
                yield item
                types = RecordedTypes(item.event_types, given, keep_unknown)
                decoder = codec.msgpack_decoder(types.union)
            else:
                yield item
            offset += _FRAME_HEAD + size
            at = end
        # Then the frame the buffer ends in, if its head is there: refuse it before reading
        # it if it is too big, and read a frame bigger than a chunk in one go.
        rest = len(buffer) - at
        if rest >= _FRAME_HEAD:
            total = _FRAME_HEAD + _frame_size(view, at, name, offset)
            if not eof and total - rest > _READ_CHUNK:
                buffer, eof = _read_frame(file, view[at:], total)
                pos = offset
                continue
        if eof:
            if rest or first:
                what = "no header" if first else "truncated frame"
                raise RecordingError(f"{name!r}: {what} at the end of the file", offset=offset)
            return
        # Small frames: the unparsed tail (less than a frame) and the next chunk. Each byte
        # is copied once here, so reading stays linear.
        chunk = file.read(_READ_CHUNK)
        eof = not chunk
        buffer = buffer[at:] + chunk
        pos = offset


def _frame_size(view: memoryview, at: int, name: str, offset: int) -> int:
    size: int = HEAD.unpack_from(view, at)[0]
    if size > MAX_FRAME_SIZE:
        raise RecordingError(
            f"{name!r}: corrupt frame (it announces {size:,} bytes; a frame holds at most "
            f"MAX_FRAME_SIZE = {MAX_FRAME_SIZE:,})",
            offset=offset,
        )
    return size


def _read_frame(file: BufferedReader, start: memoryview, total: int) -> tuple[bytes, bool]:
    """Return one whole frame of ``total`` bytes that begins with ``start``, and whether the
    file ended first (the frame is then short)."""
    # One read of the remainder (sized to what the file holds, so a torn frame that
    # announces much costs little), then one copy: linear, at most twice the frame.
    rest = file.read(total - len(start))
    return b"".join((start, rest)), len(start) + len(rest) < total


# --- JSON lines -----------------------------------------------------------------------------


def _read_jsonl(
    file: BufferedReader, name: str, given: list[Any], keep_unknown: bool
) -> Iterator[Any]:
    lines = _lines(file, name)
    try:
        _, line = next(lines)
    except StopIteration:
        raise RecordingError(f"{name!r}: empty recording (no header)", offset=0) from None
    header, checked = _jsonl_header(line, name)
    yield header
    types = RecordedTypes(header.event_types, given, keep_unknown)
    decode = codec.decode_json
    for offset, line in lines:
        body = _checked_body(line, name, offset) if checked else line
        try:
            event = decode(body, types.union)
        except _DECODE_ERRORS as exc:
            plain = _plain(codec.decode_json, body)
            event = _not_decoded(types, plain, name, "line", offset, exc)
        yield event


def _lines(file: BufferedReader, name: str) -> Iterator[tuple[int, bytes]]:
    """Yield each whole line and its offset; never read more than one line's bound."""
    offset = 0
    while line := file.readline(MAX_FRAME_SIZE + 1):
        if len(line) > MAX_FRAME_SIZE:
            raise RecordingError(
                f"{name!r}: corrupt line (longer than MAX_FRAME_SIZE = {MAX_FRAME_SIZE:,} bytes)",
                offset=offset,
            )
        if not line.endswith(b"\n"):
            raise RecordingError(f"{name!r}: truncated last line", offset=offset)
        yield offset, line
        offset += len(line)


def _jsonl_header(line: bytes, name: str) -> tuple[RecordingHeader, bool]:
    """Return the header, and whether the lines carry checksums (version 3 on)."""
    body = _line_body(line, name, 0)
    try:
        raw = msgspec.json.decode(line if body is None else body)
    except _DECODE_ERRORS as exc:
        raise RecordingError(f"{name!r}: undecodable header line ({exc})", offset=0) from exc
    header = _check_header(raw, name, 0)
    checked = header.format_version >= 3
    if checked and body is None:  # so that no damage can turn a file into an unchecked one
        _missing_checksum(name, 0)
    return header, checked


def _checked_body(line: bytes, name: str, offset: int) -> bytes:
    body = _line_body(line, name, offset)
    if body is None:
        _missing_checksum(name, offset)
    return body


def _line_body(line: bytes, name: str, offset: int) -> bytes | None:
    """Return the JSON that ``line``'s checksum covers, or None if it has no checksum."""
    end = len(line) - CRC_SUFFIX_SIZE
    if end < 1 or line[end : end + len(CRC_KEY)] != CRC_KEY or not line.endswith(b'"}\n'):
        return None
    body = line[:end] + b"}"
    # Compare the digits as written, not a parsed number: int() would take " 1f" or "+1f".
    if line[-11:-3] != b"%08x" % zlib.crc32(body):
        raise RecordingError(f"{name!r}: corrupt line (checksum mismatch)", offset=offset)
    return body


def _missing_checksum(name: str, offset: int) -> NoReturn:
    raise RecordingError(
        f"{name!r}: corrupt line (no checksum; format version 3 has one on every line)",
        offset=offset,
    )
