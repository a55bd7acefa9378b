"""Recorder and read_recording: exact round trips, flushing, torn and corrupt files."""

from __future__ import annotations

import functools
import pickle
import re
import struct
import subprocess
import sys
import textwrap
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import msgspec
import numpy as np
import pytest

from hookbus.events import (
    HOOKS,
    EpisodeEnd,
    EpisodeStart,
    EpisodeStep,
    SampleEnd,
    TrainResult,
)
from hookbus.events.codec import CodecError
from hookbus.kernel import (
    MAX_FRAME_SIZE,
    Bus,
    ConfigError,
    HookbusWarning,
    Recorder,
    RecordingError,
    read_recording,
    read_recording_header,
    replay,
)

pytestmark = pytest.mark.anyio
FORMATS = ["msgpack", "jsonl"]


def stream() -> list[Any]:
    """A mixed stream with numpy payloads: one of every event type, then some steps."""
    events: list[Any] = []
    for seq, cls in enumerate(HOOKS.values()):
        events.append(cls(source="env_runner:0", seq=seq))
    events += [
        EpisodeStart(source="env_runner:1", seq=0, episode_id="e", observation=np.arange(4.0)),
        EpisodeStep(
            source="env_runner:1",
            seq=1,
            episode_id="e",
            action=np.int64(1),
            reward=1.0,
            observation=np.ones(4, dtype=np.float32),
            info={"k": [1, 2]},
            terminated=True,
        ),
        EpisodeEnd(source="env_runner:1", seq=2, episode_id="e", terminated=True),
        TrainResult(source="algorithm", seq=0, result={"a": {"b": 1.5}}),
    ]
    return events


async def record(path: Path, events: list[Any], **options: Any) -> Recorder:
    recorder = Recorder(path, **options)
    async with Bus(recorder) as bus:
        for event in events:
            await bus.publish(event)
    return recorder


def same(a: Any, b: Any) -> bool:
    from hookbus.events import codec

    return codec.encode_msgpack(a) == codec.encode_msgpack(b)


@pytest.mark.parametrize("fmt", FORMATS)
async def test_every_event_round_trips_in_order(tmp_path: Path, fmt: str) -> None:
    events = stream()
    path = tmp_path / f"run.{fmt}"
    recorder = await record(path, events, format=fmt)
    assert recorder.events_written == len(events)
    back = list(read_recording(path))
    assert [type(e) for e in back] == [type(e) for e in events]
    assert all(same(a, b) for a, b in zip(back, events, strict=True))
    assert isinstance(back[-3].observation, np.ndarray)
    assert back[-3].observation.dtype == np.float32


@pytest.mark.parametrize("fmt", FORMATS)
async def test_header_names_versions_and_schema(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / f"run.{fmt}"
    await record(path, [], format=fmt, hooks=["on_episode_end"])
    header = read_recording_header(path)
    assert header.format_version == 3
    assert header.hookbus_version
    assert len(header.schema) == 16
    assert header.hooks == ["on_episode_end"]
    assert header.schema_is_current()
    assert not msgspec.structs.replace(header, schema="0" * 16).schema_is_current()


async def test_chosen_hooks_only_and_no_events_built_for_the_rest(tmp_path: Path) -> None:
    recorder = Recorder(tmp_path / "ends.msgpack", hooks=["on_episode_end", "on_sample_end"])
    async with Bus(recorder) as bus:
        assert not bus.has_subscribers(EpisodeStep)
        assert bus.has_subscribers(EpisodeEnd)
        for event in stream():
            await bus.publish(event)
    kinds = {type(e) for e in read_recording(tmp_path / "ends.msgpack")}
    assert kinds == {EpisodeEnd, SampleEnd}
    only_ends = list(read_recording(tmp_path / "ends.msgpack", hooks=["on_episode_end"]))
    assert {type(e) for e in only_ends} == {EpisodeEnd}


async def test_an_event_the_codec_cannot_hold_is_refused_and_leaves_no_bytes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.msgpack"
    async with Bus(Recorder(path)) as bus:
        await bus.publish(EpisodeStep(seq=0))
        with pytest.raises(CodecError, match=r"cannot record EpisodeStep \(on_episode_step\): "):
            await bus.publish(EpisodeStep(seq=1, info={"big": 10**23}))
        await bus.publish(EpisodeStep(seq=2))
    # Nothing of the refused event reached the file: it reads through to its end.
    assert [e.seq for e in read_recording(path)] == [0, 2]


async def test_events_reach_the_file_at_sample_end(tmp_path: Path) -> None:
    path = tmp_path / "live.msgpack"
    recorder = Recorder(path)
    bus = Bus(recorder)
    await bus.publish(EpisodeStep(seq=0))
    assert list(read_recording(path)) == []  # still buffered
    await bus.publish(SampleEnd(seq=1))
    assert [e.seq for e in read_recording(path)] == [0, 1]
    bus.close()


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_truncation_yields_the_valid_prefix(
    tmp_path: Path, fmt: str, write_in_place: Callable[[Path, bytes], None]
) -> None:
    # Recorded on both backends: the same bytes, so every cut is read once, not once per
    # backend (reading is sync: the backend only ever wrote the file).
    events = stream()
    for backend in ("asyncio", "trio"):
        recording = functools.partial(record, tmp_path / f"{backend}.{fmt}", events, format=fmt)
        anyio.run(recording, backend=backend)
    path = tmp_path / f"asyncio.{fmt}"
    data = path.read_bytes()
    assert (tmp_path / f"trio.{fmt}").read_bytes() == data
    header_end, frame_ends = frame_boundaries(path, data, fmt)
    torn = tmp_path / f"torn.{fmt}"
    for cut in range(header_end, len(data)):
        write_in_place(torn, data[:cut])
        got: list[Any] = []
        complete = [end for end in frame_ends if end <= cut]
        if cut in complete or cut == header_end:
            got = list(read_recording(torn))  # a clean cut between frames is a valid file
            assert len(got) == len(complete)
            continue
        with pytest.raises(RecordingError) as info:
            got.extend(read_recording(torn))
        assert len(got) == len(complete)
        assert info.value.offset == (complete[-1] if complete else header_end)
        assert f"at byte offset {info.value.offset}" in str(info.value)


def frame_boundaries(path: Path, data: bytes, fmt: str) -> tuple[int, list[int]]:
    if fmt == "jsonl":
        ends = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
        return ends[0], ends[1:]
    at, ends = 8, []
    while at < len(data):
        at += 8 + int.from_bytes(data[at : at + 4], "little")
        ends.append(at)
    return ends[0], ends[1:]


async def test_a_flipped_byte_is_caught_by_the_checksum(tmp_path: Path) -> None:
    path = tmp_path / "run.msgpack"
    await record(path, stream())
    data = bytearray(path.read_bytes())
    _, ends = frame_boundaries(path, bytes(data), "msgpack")
    data[ends[4] + 12] ^= 0xFF  # inside the body of the sixth event
    path.write_bytes(data)
    got: list[Any] = []
    with pytest.raises(RecordingError, match="checksum mismatch") as info:
        got.extend(read_recording(path))
    assert len(got) == 5
    assert info.value.offset == ends[4]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "not a hookbus recording"),
        (b"PK\x03\x04 a zip file", "not a hookbus recording"),
        (b'{"format": "something-else"}\n', "not a hookbus recording"),
        (b'{"format": "hookbus-recording", "format_version": 99}\n', "format version 99"),
    ],
)
def test_files_that_are_not_recordings_fail_at_once(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "bad"
    path.write_bytes(content)
    with pytest.raises(RecordingError, match=message) as info:
        next(read_recording(path))
    assert info.value.offset == 0


def version_1_recording(path: Path, fmt: str) -> None:
    """Write the header of a recording made before the last step moved to EpisodeStep."""
    header = {"format": "hookbus-recording", "format_version": 1, "hookbus_version": "0.1.0"}
    if fmt == "jsonl":
        path.write_bytes(msgspec.json.encode(header) + b"\n")
    else:
        body = msgspec.msgpack.encode(header)
        frame = struct.pack("<II", len(body), zlib.crc32(body)) + body
        path.write_bytes(b"HOOKBUS\x00" + frame)


@pytest.mark.parametrize("fmt", FORMATS)
async def test_a_version_1_recording_is_refused_at_once_naming_both_versions(
    tmp_path: Path, fmt: str
) -> None:
    path = tmp_path / f"old.{fmt}"
    version_1_recording(path, fmt)
    message = (
        rf"^'{re.escape(str(path))}' has recording format version 1 \(written by hookbus "
        r"0\.1\.0\); this hookbus \(.+\) reads versions 2 and 3; record the run again"
    )
    with pytest.raises(RecordingError, match=message) as info:
        read_recording_header(path)
    assert info.value.offset == (8 if fmt == "msgpack" else 0)  # the header, after the magic
    with pytest.raises(RecordingError, match=message):
        next(read_recording(path))
    published: list[Any] = []
    with pytest.raises(RecordingError, match=message):
        await replay(path, on_episode_end=lambda **kw: published.append(1))
    assert published == []


def test_bad_recorder_settings(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown recording format 'csv'; allowed: 'msgpack'"):
        Recorder(tmp_path / "x", format="csv")
    with pytest.raises(ConfigError, match="unknown hook 'on_episode_ends'"):
        Recorder(tmp_path / "x", hooks=["on_episode_ends"])


def test_a_pickled_recorder_is_detached(tmp_path: Path) -> None:
    recorder = Recorder(tmp_path / "main.msgpack")
    copy = pickle.loads(pickle.dumps(recorder))
    copy.record(event=EpisodeStep())
    copy.close()
    recorder.close()
    assert list(read_recording(tmp_path / "main.msgpack")) == []  # the copy wrote nothing


def test_a_crashed_process_leaves_a_readable_prefix(tmp_path: Path) -> None:
    path = tmp_path / "crash.msgpack"
    script = textwrap.dedent(
        f"""
        import os, anyio
        from hookbus.events import EpisodeStep, SampleEnd
        from hookbus.kernel import Bus, Recorder

        async def main():
            bus = Bus(Recorder({str(path)!r}))
            for seq in range(3):
                await bus.publish(EpisodeStep(seq=seq))
            await bus.publish(SampleEnd(seq=3))        # flushed
            await bus.publish(EpisodeStep(seq=4))      # buffered, lost in the crash
            os._exit(1)

        anyio.run(main)
        """
    )
    subprocess.run([sys.executable, "-c", script], check=False)
    assert [e.seq for e in read_recording(path)] == [0, 1, 2, 3]


def version_2_recording(path: Path, fmt: str, events: list[Any]) -> None:
    """Write a recording as hookbus wrote them before format 3 (JSON lines unchecked)."""
    from hookbus.events import codec

    header = {"format": "hookbus-recording", "format_version": 2, "hookbus_version": "0.1.0"}
    if fmt == "jsonl":
        lines = [msgspec.json.encode(header)] + [codec.encode_json(e) for e in events]
        path.write_bytes(b"".join(line + b"\n" for line in lines))
    else:
        bodies = [msgspec.msgpack.encode(header)] + [codec.encode_msgpack(e) for e in events]
        frames = [struct.pack("<II", len(b), zlib.crc32(b)) + b for b in bodies]
        path.write_bytes(b"HOOKBUS\x00" + b"".join(frames))


@pytest.mark.parametrize("fmt", FORMATS)
async def test_a_version_2_recording_still_reads_and_replays(tmp_path: Path, fmt: str) -> None:
    events = stream()
    path = tmp_path / f"v2.{fmt}"
    version_2_recording(path, fmt, events)
    assert read_recording_header(path).format_version == 2
    back = list(read_recording(path))
    assert all(same(a, b) for a, b in zip(back, events, strict=True))
    returns: list[float] = []
    # One of every type, a recording's gap marker among them: replaying past it warns.
    with pytest.warns(HookbusWarning, match="RecordingGap event"):
        count = await replay(
            path, on_episode_end=lambda episode, **kw: returns.append(episode.get_return())
        )
    assert (count, returns) == (len(events), [0.0, 1.0])  # a bare EpisodeEnd, then "e"


@pytest.mark.parametrize(
    ("fmt", "payload"),
    [
        ("msgpack", np.zeros(MAX_FRAME_SIZE, dtype=np.uint8)),  # plus the event's own fields
        ("jsonl", np.zeros(MAX_FRAME_SIZE * 3 // 4, dtype=np.uint8)),  # base64 makes it 4/3
    ],
)
def test_the_recorder_refuses_an_event_it_could_not_read_back(
    tmp_path: Path, fmt: str, payload: np.ndarray
) -> None:
    path = tmp_path / f"big.{fmt}"
    recorder = Recorder(path, format=fmt)
    recorder.record(event=EpisodeStep(seq=0))
    recorder.flush()
    size = path.stat().st_size
    recorder.record(event=EpisodeStep(seq=1))
    message = r"cannot record EpisodeStep \(on_episode_step\) in .* more than MAX_FRAME_SIZE"
    with pytest.raises(RecordingError, match=message) as info:
        recorder.record(event=EpisodeStep(seq=2, observation=payload))
    recorder.record(event=EpisodeStep(seq=3))  # the recorder goes on
    recorder.close()
    assert [e.seq for e in read_recording(path)] == [0, 1, 3]  # nothing of seq 2 was written
    assert info.value.offset == size + (path.stat().st_size - size) // 2  # where it would be


async def test_a_frame_bigger_than_a_read_chunk_reads_whole_and_tears_at_its_start(
    tmp_path: Path,
) -> None:
    big = np.arange(3 * 2**20 // 8, dtype=np.float64)  # 3 MiB: larger than one read
    events = [EpisodeStep(seq=0), EpisodeStep(seq=1, observation=big), EpisodeStep(seq=2)]
    path = tmp_path / "big.msgpack"
    await record(path, events)
    back = list(read_recording(path))
    assert [e.seq for e in back] == [0, 1, 2]
    np.testing.assert_array_equal(back[1].observation, big)
    data = path.read_bytes()
    _, ends = frame_boundaries(path, data, "msgpack")
    torn = tmp_path / "torn.msgpack"
    for cut in (ends[0] + 4, ends[0] + 9, ends[0] + 2**20 + 100, ends[1] - 1):
        torn.write_bytes(data[:cut])
        got: list[Any] = []
        with pytest.raises(RecordingError, match="truncated frame") as info:
            got.extend(read_recording(torn))
        assert (info.value.offset, len(got)) == (ends[0], 1)
