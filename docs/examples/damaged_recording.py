"""Read a damaged recording: the valid prefix, then a RecordingError at the bad frame's offset.

Also checks a JSON-lines recording by hand, the way any tool can: every line is a JSON object
whose last member, "crc32", is the CRC-32 of the line's JSON without that member.
"""

from __future__ import annotations

import json
import tempfile
import zlib
from pathlib import Path

import numpy as np

from hookbus.events import EpisodeStart, EpisodeStep
from hookbus.kernel import MAX_FRAME_SIZE, Recorder, RecordingError, read_recording


def record(path: Path, format: str) -> None:
    recorder = Recorder(path, format=format)
    recorder.record(event=EpisodeStart(episode_id="e", observation=np.zeros(4)))
    for seq in range(1, 4):
        recorder.record(event=EpisodeStep(seq=seq, episode_id="e", reward=1.0))
    recorder.close()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for format in ("msgpack", "jsonl"):
            path = Path(tmp) / f"run.{format}"
            record(path, format)
            data = bytearray(path.read_bytes())
            data[-10] ^= 0x04  # one flipped bit, in the last event
            path.write_bytes(data)
            events = []
            try:
                events.extend(read_recording(path))
            except RecordingError as exc:  # exc.offset: where the bad frame (or line) starts
                print(f"{format}: read {len(events)} events, then: {exc}")
            else:
                raise SystemExit(f"{format}: the flipped bit went unnoticed")

        # A JSON-lines file checked without hookbus.
        path = Path(tmp) / "clean.jsonl"
        record(path, "jsonl")
        for line in path.read_bytes().splitlines():
            fields = json.loads(line)
            crc = fields.pop("crc32")
            body = line[: line.rindex(b',"crc32":')] + b"}"
            assert f"{zlib.crc32(body):08x}" == crc
        print(f"every line of {path.name} checks; an event may take {MAX_FRAME_SIZE:,} bytes")


if __name__ == "__main__":
    main()
