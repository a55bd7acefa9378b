"""Damaged and hostile recordings: every failure is a RecordingError at the bad frame or line.

Every file read is untrusted. Whatever is wrong with one, reading yields the valid prefix,
then raises RecordingError whose ``offset`` is where the first bad frame (msgpack) or line
(jsonl) starts, in memory bounded by MAX_FRAME_SIZE whatever the file claims.
"""

from __future__ import annotations

import bisect
import string
import struct
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from hookbus.events import (
    EpisodeEnd,
    EpisodeStart,
    EpisodeStep,
    SampleEnd,
    TrainResult,
    codec,
)
from hookbus.kernel import (
    MAX_FRAME_SIZE,
    Recorder,
    RecordingError,
    read_recording,
    read_recording_header,
)

FORMATS = ["msgpack", "jsonl"]
MAGIC = b"HOOKBUS\x00"
# Hypothesis reuses tmp_path across examples: each example overwrites its own files.
FUZZ = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


# --- building files by the documented layout (docs/recording.md) ----------------------------


def small_stream() -> list[Any]:
    return [
        EpisodeStart(source="env_runner:0", seq=0, episode_id="e", observation=np.arange(3.0)),
        EpisodeStep(
            source="env_runner:0",
            seq=1,
            episode_id="e",
            action=np.int64(1),
            reward=0.5,
            observation=np.ones(3, dtype=np.float32),
            info={"k": "v"},
        ),
        EpisodeEnd(source="env_runner:0", seq=2, episode_id="e", terminated=True),
        SampleEnd(source="env_runner:0", seq=3, num_env_steps=1, episode_ids=["e"]),
        TrainResult(source="algorithm", seq=0, result={"r": 1.5}),
    ]


def write(path: Path, events: list[Any], fmt: str) -> bytes:
    recorder = Recorder(path, format=fmt)
    for event in events:
        recorder.record(event=event)
    recorder.close()
    return path.read_bytes()


def frame(body: bytes) -> bytes:
    return struct.pack("<II", len(body), zlib.crc32(body)) + body


def signed(body: bytes) -> bytes:
    """A format 3 JSON line: the object's JSON with its CRC-32 appended as a last member."""
    return body[:-1] + b',"crc32":"%08x"}\n' % zlib.crc32(body)


def header(version: int = 3, **fields: Any) -> dict[str, Any]:
    return {"format": "hookbus-recording", "format_version": version, **fields}


def file_with(fmt: str, *bodies: bytes, head: dict[str, Any] | None = None) -> bytes:
    """A recording of a format 3 header and the given raw frame bodies (or line JSONs)."""
    head = header() if head is None else head
    if fmt == "msgpack":
        return MAGIC + frame(msgspec.msgpack.encode(head)) + b"".join(map(frame, bodies))
    return signed(msgspec.json.encode(head)) + b"".join(map(signed, bodies))


def frame_starts(data: bytes, fmt: str) -> list[int]:
    """Where each frame or line starts: the header's first, then one per event."""
    if fmt == "jsonl":
        return [0] + [i + 1 for i, byte in enumerate(data[:-1]) if byte == ord("\n")]
    at, starts = len(MAGIC), []
    while at < len(data):
        starts.append(at)
        at += 8 + int.from_bytes(data[at : at + 4], "little")
    return starts


def expected_failure(starts: list[int], bad_byte: int) -> tuple[int, int]:
    """Return the offset a damage at ``bad_byte`` is reported at, and the events before it."""
    if bad_byte < starts[0]:
        return 0, 0  # the magic: not a recording at all
    index = bisect.bisect_right(starts, bad_byte) - 1
    return starts[index], max(index - 1, 0)  # index 0 is the header: no events before


def outcome(path: Path) -> tuple[list[Any], RecordingError | None]:
    """Return the events read and the RecordingError that ended them (None if none did)."""
    got: list[Any] = []
    try:
        got.extend(read_recording(path))
    except RecordingError as exc:
        return got, exc
    return got, None


def read_damaged(path: Path) -> tuple[list[Any], RecordingError]:
    got: list[Any] = []
    with pytest.raises(RecordingError) as info:
        got.extend(read_recording(path))
    return got, info.value


def same(a: list[Any], b: list[Any]) -> bool:
    return [codec.encode_msgpack(x) for x in a] == [codec.encode_msgpack(x) for x in b]


# --- bit flips and truncation ---------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_single_bit_flip_is_found_at_its_frame(
    tmp_path: Path, fmt: str, write_in_place: Callable[[Path, bytes], None]
) -> None:
    events = small_stream()[:2]  # numpy arrays and a scalar, small enough to flip every bit
    data = write(tmp_path / f"good.{fmt}", events, fmt)
    starts = frame_starts(data, fmt)
    bad = tmp_path / f"bad.{fmt}"
    for bit in range(len(data) * 8):  # all of them, not a sample
        flipped = bytearray(data)
        flipped[bit // 8] ^= 1 << (bit % 8)
        write_in_place(bad, flipped)
        got, error = outcome(bad)
        assert error is not None, f"flipping bit {bit} (byte {bit // 8}) went unnoticed"
        assert (error.offset, len(got)) == expected_failure(starts, bit // 8), bit
        assert same(got, events[: len(got)])


keys = st.text(string.ascii_letters, max_size=5)
plain = st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=8)
values = st.recursive(
    plain | st.floats(allow_nan=False, allow_infinity=False),  # JSON has no NaN
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=8,
)
arrays = hnp.arrays(
    dtype=st.sampled_from([np.float32, np.float64, np.int64, np.uint8, np.bool_]),
    shape=hnp.array_shapes(min_dims=0, max_dims=2, max_side=4),
)
events_st = st.one_of(
    st.builds(
        EpisodeStep,
        source=st.just("env_runner:0"),
        seq=st.integers(0, 2**31),
        episode_id=keys,
        action=st.integers(0, 3),
        reward=st.floats(allow_nan=False, allow_infinity=False),
        observation=arrays,
        info=st.dictionaries(keys, values, max_size=3),
    ),
    st.builds(TrainResult, source=st.just("algorithm"), result=st.dictionaries(keys, values)),
)


@FUZZ
@given(events=st.lists(events_st, max_size=6), fmt=st.sampled_from(FORMATS), data=st.data())
def test_truncation_and_flips_anywhere_are_found_after_the_valid_prefix(
    tmp_path: Path,
    events: list[Any],
    fmt: str,
    data: st.DataObject,
    write_in_place: Callable[[Path, bytes], None],
) -> None:
    good = write(tmp_path / f"good.{fmt}", events, fmt)
    starts = frame_starts(good, fmt)
    cut = data.draw(st.integers(0, len(good)), label="cut")
    flips = data.draw(
        st.lists(st.integers(0, cut * 8 - 1), max_size=3, unique=True) if cut else st.just([])
    )
    damaged = bytearray(good[:cut])
    for bit in flips:
        damaged[bit // 8] ^= 1 << (bit % 8)
    path = tmp_path / f"damaged.{fmt}"
    write_in_place(path, damaged)
    clean_cut = cut == len(good) or cut in starts[1:]  # between two frames: a valid file
    first_bad = min([bit // 8 for bit in flips] + ([] if clean_cut else [cut]), default=None)
    if first_bad is None:
        got = list(read_recording(path))
        assert same(got, events[: len(got)])
        assert len(got) == len(starts) - 1 - sum(start >= cut for start in starts[1:])
        return
    got, error = read_damaged(path)
    assert (error.offset, len(got)) == expected_failure(starts, first_bad)
    assert same(got, events[: len(got)])
    assert f"at byte offset {error.offset}" in str(error)


# --- frames and lines with a valid checksum but hostile content --------------------------


def numpy_payload(descr: Any, shape: Any, raw: bytes) -> bytes:
    head = msgspec.msgpack.encode([descr, shape])
    return len(head).to_bytes(4, "little") + head + raw


MALFORMED_ARRAYS = {
    "too short for its header length": msgspec.msgpack.Ext(1, b"\x01\x02"),
    "header length past the end": msgspec.msgpack.Ext(1, b"\xff\x00\x00\x00abc"),
    "header not a pair": msgspec.msgpack.Ext(1, b"\x04\x00\x00\x00\x93\x01\x02\x03"),
    "unknown dtype": msgspec.msgpack.Ext(1, numpy_payload("<zz", [1], bytes(8))),
    "object dtype": msgspec.msgpack.Ext(1, numpy_payload("|O", [1], bytes(8))),
    "data shorter than the shape": msgspec.msgpack.Ext(1, numpy_payload("<f8", [3], bytes(8))),
    "data longer than the shape": msgspec.msgpack.Ext(1, numpy_payload("<f8", [1], bytes(9))),
    "shape of strings": msgspec.msgpack.Ext(1, numpy_payload("<f8", ["a"], bytes(8))),
    "negative shape": msgspec.msgpack.Ext(1, numpy_payload("<f8", [-1], b"")),
    "huge shape": msgspec.msgpack.Ext(1, numpy_payload("<f8", [2**40, 2**40], bytes(8))),
    "scalar with a shape": msgspec.msgpack.Ext(2, numpy_payload("<f8", [2], bytes(16))),
    "scalar without data": msgspec.msgpack.Ext(2, numpy_payload("<f8", [], b"")),
    "structured garbage": msgspec.msgpack.Ext(1, numpy_payload([["a"]], [1], bytes(8))),
    "unknown extension": msgspec.msgpack.Ext(7, b""),
}
MALFORMED_JSON_ARRAYS = {
    "bad base64": {"__ndarray__": "@@@=", "dtype": "<f8", "shape": [1]},
    "base64 not a string": {"__ndarray__": 5, "dtype": "<f8", "shape": [1]},
    "no dtype": {"__ndarray__": "AAAAAAAAAAA="},
    "object dtype": {"__ndarray__": "AAAAAAAAAAA=", "dtype": "|O", "shape": [1]},
    "data shorter than the shape": {"__ndarray__": "AAAAAAAAAAA=", "dtype": "<f8", "shape": [3]},
    "shape not a list": {"__ndarray__": "AAAAAAAAAAA=", "dtype": "<f8", "shape": "1"},
    "empty scalar": {"__npscalar__": "", "dtype": "<f8"},
}


def step_with(fmt: str, observation: Any) -> bytes:
    step = {"type": "episode_step", "seq": 1, "observation": observation}
    return (msgspec.msgpack if fmt == "msgpack" else msgspec.json).encode(step)


def good_step(fmt: str) -> bytes:
    event = EpisodeStep(seq=0, observation=np.zeros(2))
    return codec.encode_msgpack(event) if fmt == "msgpack" else codec.encode_json(event)


@pytest.mark.parametrize(
    ("fmt", "value"),
    [pytest.param("msgpack", v, id=f"msgpack-{k}") for k, v in MALFORMED_ARRAYS.items()]
    + [pytest.param("jsonl", v, id=f"jsonl-{k}") for k, v in MALFORMED_JSON_ARRAYS.items()],
)
def test_a_malformed_numpy_payload_under_a_valid_checksum_is_a_recording_error(
    tmp_path: Path, fmt: str, value: Any
) -> None:
    path = tmp_path / f"run.{fmt}"
    path.write_bytes(file_with(fmt, good_step(fmt), step_with(fmt, value)))
    got, error = read_damaged(path)
    assert (error.offset, len(got)) == (frame_starts(path.read_bytes(), fmt)[2], 1)
    assert isinstance(error.__cause__, codec.CodecError)  # chained, naming what is wrong
    assert "malformed numpy" in str(error) or "extension type 7" in str(error)


@pytest.mark.parametrize("fmt", FORMATS)
def test_deep_nesting_under_a_valid_checksum_is_a_recording_error(tmp_path: Path, fmt: str) -> None:
    depth = 100_000
    if fmt == "msgpack":
        nested = b"\x91" * depth + b"\x01"  # fixarray of one, 100k deep
        body = b"\x83\xa4type\xacepisode_step\xa3seq\x01\xa4info\x81\xa1k" + nested
    else:
        body = b'{"type":"episode_step","seq":1,"info":{"k":' + b"[" * depth + b"]" * depth + b"}}"
    path = tmp_path / f"deep.{fmt}"
    path.write_bytes(file_with(fmt, good_step(fmt), body))
    got, error = read_damaged(path)
    assert (error.offset, len(got)) == (frame_starts(path.read_bytes(), fmt)[2], 1)
    assert "recursion" in str(error)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"format_version": "3"}, "format version '3'"),
        (
            {"hooks": [1, 2]},
            r"bad recording header \(Expected `str`, got `int` - at `\$.hooks\[0\]`",
        ),
        ({"schema": 5}, "bad recording header"),
        ({"hookbus_version": None}, "bad recording header"),
        ({"format_version": 2.5}, "format version 2.5"),
        ({"format_version": [3]}, r"format version \[3\]"),
    ],
)
def test_a_header_with_wrongly_typed_fields_is_a_recording_error(
    tmp_path: Path, fmt: str, fields: dict[str, Any], message: str
) -> None:
    path = tmp_path / f"head.{fmt}"
    path.write_bytes(file_with(fmt, good_step(fmt), head={**header(), **fields}))
    with pytest.raises(RecordingError, match=message) as info:
        read_recording_header(path)
    assert info.value.offset == (8 if fmt == "msgpack" else 0)


hostile_descr = st.one_of(
    st.sampled_from(["<f8", "|u1", "|b1", "|O", "<zz", "|V0", "<U2", "|S0", "i8,i8", "<M8[s]"]),
    st.text(max_size=6),
    st.lists(
        st.lists(st.text(max_size=3) | st.sampled_from(["<f8", "|O"]), max_size=3), max_size=2
    ),
    st.integers(-(2**63), 2**63 - 1) | st.none(),
)
hostile_shape = st.one_of(
    st.lists(st.integers(-2, 2**40), max_size=3), st.text(max_size=3), st.none()
)
hostile_ext = st.builds(
    lambda code, descr, shape, raw, whole: msgspec.msgpack.Ext(
        code, whole if whole is not None else numpy_payload(descr, shape, raw)
    ),
    code=st.sampled_from([1, 2, 3]),
    descr=hostile_descr,
    shape=hostile_shape,
    raw=st.binary(max_size=24),
    whole=st.none() | st.binary(max_size=16),
)
hostile_values = st.recursive(
    plain | st.floats() | st.binary(max_size=8) | hostile_ext,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=6,
)
hostile_json = st.recursive(
    plain | st.floats(allow_nan=False),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(keys, inner, max_size=3)
        | st.fixed_dictionaries(
            {"__ndarray__": st.text(max_size=12) | st.integers(), "dtype": hostile_descr},
            optional={"shape": hostile_shape},
        )
        | st.fixed_dictionaries(
            {"__npscalar__": st.text(string.ascii_letters + "+/=", max_size=12)},
            optional={"dtype": hostile_descr},
        )
    ),
    max_leaves=6,
)
tags = st.sampled_from(["episode_step", "episode_start", "train_result", "sample_end", "nope"])
hostile_events = st.fixed_dictionaries(
    {"type": tags},
    optional={
        "seq": hostile_values,
        "observation": hostile_values,
        "info": hostile_values,
        "episode_ids": hostile_values,
    },
)


def bodies(fmt: str) -> st.SearchStrategy[bytes]:
    if fmt == "msgpack":
        structured = hostile_events.map(msgspec.msgpack.encode)
        return structured | st.binary(max_size=40)
    events = st.fixed_dictionaries(
        {"type": tags}, optional={"observation": hostile_json, "info": hostile_json}
    )
    # Raw bytes between braces: newlines and invalid UTF-8 included.
    return events.map(msgspec.json.encode) | st.binary(max_size=40).map(lambda b: b"{" + b + b"}")


@FUZZ
@given(fmt=st.sampled_from(FORMATS), data=st.data())
def test_any_frame_under_a_valid_checksum_is_an_event_or_a_recording_error(
    tmp_path: Path, fmt: str, data: st.DataObject, write_in_place: Callable[[Path, bytes], None]
) -> None:
    body = data.draw(bodies(fmt), label="body")
    path = tmp_path / f"hostile.{fmt}"
    write_in_place(path, file_with(fmt, good_step(fmt), body, good_step(fmt)))
    starts = frame_starts(path.read_bytes(), fmt)
    got, error = outcome(path)  # anything but RecordingError fails the test
    if error is not None:
        assert (error.offset, len(got)) == (starts[2], 1)
    else:
        assert len(got) == 3


@FUZZ
@given(
    fmt=st.sampled_from(FORMATS),
    fields=st.dictionaries(
        st.sampled_from(["format", "format_version", "hookbus_version", "schema", "hooks"]),
        plain | st.lists(plain, max_size=2) | st.floats(allow_nan=False),
    ),
)
def test_any_header_under_a_valid_checksum_reads_or_is_a_recording_error(
    tmp_path: Path, fmt: str, fields: dict[str, Any], write_in_place: Callable[[Path, bytes], None]
) -> None:
    path = tmp_path / f"head.{fmt}"
    write_in_place(path, file_with(fmt, head={**header(), **fields}))
    try:
        read: Any = read_recording_header(path)
    except RecordingError as exc:
        read = exc
    if isinstance(read, RecordingError):
        assert read.offset == (8 if fmt == "msgpack" else 0)
    else:
        assert read.format_version in (2, 3)


# --- format 3 JSON lines must all carry their checksum -----------------------------------


def test_a_format_3_json_line_without_its_checksum_is_refused(tmp_path: Path) -> None:
    events = small_stream()
    lines = write(tmp_path / "good.jsonl", events, "jsonl").splitlines(keepends=True)
    lines[3] = codec.encode_json(events[2]) + b"\n"  # the same event, unsigned
    path = tmp_path / "unsigned.jsonl"
    path.write_bytes(b"".join(lines))
    got, error = read_damaged(path)
    assert (error.offset, len(got)) == (sum(map(len, lines[:3])), 2)
    assert "no checksum" in str(error)


def test_a_format_3_header_line_without_its_checksum_is_refused(tmp_path: Path) -> None:
    # Else one damaged header would turn a whole file into an unchecked version 2 one.
    path = tmp_path / "unsigned.jsonl"
    path.write_bytes(msgspec.json.encode(header()) + b"\n" + signed(good_step("jsonl")))
    with pytest.raises(RecordingError, match="no checksum") as info:
        read_recording_header(path)
    assert info.value.offset == 0


# --- bounded memory, whatever a file claims ------------------------------------------------


def peak_memory(read: Callable[[], Any]) -> int:
    tracemalloc.start()
    try:
        read()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def test_a_frame_announcing_more_than_the_maximum_fails_at_once(tmp_path: Path) -> None:
    path = tmp_path / "huge.msgpack"
    good = write(path, small_stream(), "msgpack")
    with open(path, "ab") as file:
        file.write(struct.pack("<II", 2**31, 0))
        file.truncate(len(good) + 8 + 4 * MAX_FRAME_SIZE)  # sparse: no disk, all zeros
    outcome: list[Any] = []
    peak = peak_memory(lambda: outcome.append(read_damaged(path)))
    got, error = outcome[0]
    assert (error.offset, len(got)) == (len(good), 5)
    assert "announces 2,147,483,648 bytes" in str(error)
    assert peak < 32 * 2**20  # the frame's bytes were never read


def test_a_json_line_longer_than_the_maximum_fails_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "endless.jsonl"
    good = write(path, small_stream(), "jsonl")
    with open(path, "ab") as file:
        file.truncate(len(good) + 4 * MAX_FRAME_SIZE)  # sparse zeros, no newline
    outcome: list[Any] = []
    peak = peak_memory(lambda: outcome.append(read_damaged(path)))
    got, error = outcome[0]
    assert (error.offset, len(got)) == (len(good), 5)
    assert "longer than MAX_FRAME_SIZE" in str(error)
    assert peak < 2.5 * MAX_FRAME_SIZE  # one line's bound, not the 256 MiB that follow
