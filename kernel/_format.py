"""The recording file format, shared by the writer (``_record``) and the reader (``_read``).

Two formats, both streams of events after a header:

- ``msgpack``: the magic ``b"HOOKBUS\\x00"``, then frames. A frame is a 4-byte little-endian
  body length, the body's 4-byte CRC-32, and the body: MessagePack of the header (first
  frame) or of one event. A torn or corrupt frame is detected by its length or its CRC.
- ``jsonl``: one JSON object per line, the header first. Since version 3 each object ends
  with a fixed-width ``"crc32":"%08x"`` member: the CRC-32 of the line's JSON as it was
  before that member was appended, so that every line stays valid JSON (for jq and the
  like) and a flipped bit is found. A torn last line has no newline.

No frame body and no line (newline included) is longer than ``MAX_FRAME_SIZE``: the writer
refuses a bigger event, and the reader refuses a bigger frame before reading it. No event
nests containers deeper than ``MAX_DEPTH``: the writer refuses a deeper one, and the reader
reads at least that deep (more, as far as the stack lets it).
"""

from __future__ import annotations

import struct
from typing import Literal

import msgspec

from hookbus.events import Event

__all__ = (
    "FORMAT_VERSION",
    "MAGIC",
    "MAX_DEPTH",
    "MAX_FRAME_SIZE",
    "READ_VERSIONS",
    "RecordingHeader",
    "schema_fingerprint",
)

MAGIC = b"HOOKBUS\x00"
FORMAT_VERSION = 3
"""The recording format this hookbus writes.

Version 3: every JSON line ends with its checksum (msgpack frames are unchanged).
Version 2: the step that ends an episode is an ``EpisodeStep`` (with ``terminated``/
``truncated``) followed by an ``EpisodeEnd`` without step data; version 1 files put that step
in ``EpisodeEnd`` and would replay wrong, so they are refused."""
READ_VERSIONS = (2, 3)
"""The versions this hookbus reads: version 2 JSON lines have no checksum."""

MAX_FRAME_SIZE = 64 * 2**20
"""The most bytes one recorded event may take: a msgpack frame's body, or a JSON line.

An event holds one step's data, so a legitimate frame is small: a large image observation
(1024x1024x3 float32) is 12 MiB. 64 MiB leaves room for far more while keeping what a
reader holds for one frame (at most about twice this) bounded whatever a file claims."""

MAX_DEPTH = 256
"""The deepest an event may nest containers (dicts, lists, tuples, Structs, ...), the event
itself counting 1; numpy values count as none.

Decoding (msgspec's, and the JSON reader's own pass) takes a stack frame per level, so how
deep a reader can go depends on how deep its caller's stack already is: about 990 levels
from a shallow one. An event holds a step's data (an info dict a few levels deep), and 256
leaves room for far more while staying readable from deep inside a framework's stack, in
both formats alike."""

HEAD = struct.Struct("<II")  # msgpack frame: body length, CRC-32 of the body (little-endian)

# A version 3 JSON line: the object's JSON minus its closing brace, then LINE_END % its CRC.
# Every object written has members (a tag at least), so the comma is always right.
LINE_END = b',"crc32":"%08x"}\n'
CRC_KEY = b',"crc32":"'
CRC_SUFFIX_SIZE = len(LINE_END % 0)  # from the object's last member to the newline

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
    event_types: dict[str, str] = msgspec.field(default_factory=dict)
    """The event types of your own the file may hold: tag -> ``"module:QualName"``, by which
    a reader imports them (docs/recording.md). The hooks' own types are never listed."""
    producer: str = ""
    """What published the events: ``""`` for hookbus's own runners (and files from before
    this field), ``"rllib"`` or ``"sb3"`` for a bridge's run. A replay follows that
    framework's reduce cycle (docs/recording.md)."""
    producer_version: str = ""
    """The producing framework's version (``"2.60.0"`` for Ray's), if a bridge wrote it."""

    def schema_is_current(self) -> bool:
        """Return whether the file's events have this hookbus's event schema.

        When they do not, the file was written by a hookbus whose event types differ; it
        still reads as long as the changes only added fields with defaults.
        """
        return self.schema == schema_fingerprint()


def schema_fingerprint() -> str:
    """Return a short hash of the event types' JSON schema: it changes when events change."""
    schema = msgspec.json.encode(msgspec.json.schema(Event))
    import hashlib  # only when a header is made: its import costs a service's start

    return hashlib.sha256(schema).hexdigest()[:16]


def hookbus_version() -> str:
    """Return the installed hookbus's version, for headers and messages."""
    # importlib.metadata costs ~20 ms to import: only when a file or a message needs it.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hookbus")
    except PackageNotFoundError:  # pragma: no cover - running from a bare source tree
        return "unknown"
