"""Recordings written by hand, as the author of a hostile file would write them.

The frames, lines and checksums follow docs/recording.md ("The file") and nothing else; the
header says whatever its author wants. ``plant`` writes a module that leaves a marker file
when imported, so that a test can tell that reading a recording never imported it.
"""

from __future__ import annotations

import struct
import sys
import textwrap
import uuid
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from hookbus.events import codec
from hookbus.kernel import Recorder, read_recording_header

MAGIC = b"HOOKBUS\x00"
HEAD = struct.Struct("<II")  # body length, CRC-32 of the body


def genuine_header(folder: Path) -> dict[str, Any]:
    """Return the header this hookbus writes, as a plain dict to change."""
    path = folder / f"genuine-{uuid.uuid4().hex[:8]}.msgpack"
    Recorder(path, hooks=["on_episode_end"]).close()  # lists no type of the test process
    header: dict[str, Any] = msgspec.structs.asdict(read_recording_header(path))
    path.unlink()
    return {**header, "hooks": None}


def write(path: Path, header: dict[str, Any], events: list[Any]) -> list[int]:
    """Write ``header`` and ``events`` (events or plain dicts) in the format ``path``'s
    suffix names, checksums included; return each event's byte offset."""
    jsonl = path.suffix == ".jsonl"
    data = bytearray() if jsonl else bytearray(MAGIC)
    offsets = []
    for i, item in enumerate([header, *events]):
        if i:
            offsets.append(len(data))
        if jsonl:
            body = codec.encode_json(item)
            data += body[:-1] + b',"crc32":"%08x"}\n' % zlib.crc32(body)
        else:
            body = codec.encode_msgpack(item)
            data += HEAD.pack(len(body), zlib.crc32(body)) + body
    path.write_bytes(bytes(data))
    return offsets


PLANTED = textwrap.dedent(
    """
    import pathlib

    pathlib.Path({marker!r}).write_text("imported")

    from hookbus.events import BaseEvent

    class Thing(BaseEvent, frozen=True, kw_only=True, tag={tag!r}):
        n: int = 0
    """
)


@dataclass(frozen=True)
class Planted:
    """A module that leaves ``marker`` when imported, defining ``Thing`` tagged ``tag``."""

    module: str
    marker: Path
    tag: str

    @property
    def type_name(self) -> str:
        return f"{self.module}:Thing"

    def assert_not_imported(self) -> None:
        assert not self.marker.exists(), f"{self.module} was imported"
        assert self.module not in sys.modules


def plant(folder: Path, name: str = "hb_planted") -> Planted:
    """Write a fresh module (a name never used before) into ``folder``."""
    unique = uuid.uuid4().hex[:10]
    module, tag = f"{name}_{unique}", f"hb_planted_{unique}"
    marker = folder / f"{module}.imported"
    (folder / f"{module}.py").write_text(PLANTED.format(marker=str(marker), tag=tag))
    return Planted(module, marker, tag)


def things(tag: str, source: str = "planted", count: int = 2) -> list[dict[str, Any]]:
    """Return ``count`` encoded events of the planted type, as plain dicts."""
    return [{"type": tag, "source": source, "seq": n, "n": n} for n in range(count)]
