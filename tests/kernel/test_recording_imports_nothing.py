"""Reading a recording never imports what its header names: a file is data, not code.

Each test plants a module that leaves a marker file when imported, puts its folder on
``sys.path`` and makes it the working folder, then reads a recording whose header names the
module, through every way the kernel reads one.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from hookbus.events import EpisodeEnd
from hookbus.kernel import (
    Callback,
    ConfigError,
    RecordingError,
    UnknownEvent,
    read_recording,
    read_recording_header,
    replay,
    replay_into,
)

sys.path.insert(0, str(Path(__file__).parent))
from crafted_recordings import Planted, genuine_header, plant, things, write

FORMATS = ["msgpack", "jsonl"]


class Ends(Callback):
    def __init__(self) -> None:
        super().__init__()
        self.ends: list[str] = []

    def on_episode_end(self, *, event: EpisodeEnd, **kwargs: Any) -> None:
        self.ends.append(event.episode_id)


def end(seq: int) -> EpisodeEnd:
    return EpisodeEnd(source="env_runner:0", seq=seq, episode_id=f"e{seq}")


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Planted:
    """A planted module, importable by name from here and in the working folder."""
    module = plant(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return module


def naming(planted: Planted, path: Path) -> list[int]:
    """Write a recording whose header names the planted type: an end, two of the planted
    type's events, an end. Return the events' offsets."""
    header = genuine_header(path.parent)
    header["event_types"] = {planted.tag: planted.type_name}
    return write(path, header, [end(0), *things(planted.tag), end(1)])


@pytest.mark.parametrize("format", FORMATS)
def test_reading_stops_at_the_unknown_type_without_importing_it(
    planted: Planted, tmp_path: Path, format: str
) -> None:
    path = tmp_path / f"planted.{format}"
    offsets = naming(planted, path)
    assert read_recording_header(path).event_types == {planted.tag: planted.type_name}
    planted.assert_not_imported()
    got = []
    with pytest.raises(RecordingError, match=rf"type {planted.type_name} \(tag ") as info:
        got.extend(read_recording(path))
    assert got == [end(0)]  # the valid prefix
    assert (info.value.offset, info.value.missing_type) == (offsets[1], planted.type_name)
    assert info.value.unknown_tag == planted.tag
    assert f"--types {planted.module}.py:Thing " in str(info.value)
    with pytest.raises(RecordingError, match=planted.type_name):
        list(read_recording(path, hooks=["on_episode_end"]))  # its hook is not recorded
    planted.assert_not_imported()


@pytest.mark.parametrize("format", FORMATS)
def test_unknown_types_can_be_read_as_plain_data(
    planted: Planted, tmp_path: Path, format: str
) -> None:
    path = tmp_path / f"planted.{format}"
    offsets = naming(planted, path)
    events = list(read_recording(path, unknown="data"))
    assert events[0] == end(0)
    assert events[1:3] == [
        UnknownEvent(planted.tag, "planted", n, {"n": n}, planted.type_name, offsets[1 + n])
        for n in range(2)
    ]
    assert events[3] == end(1)
    # hooks= keeps them too: which hook they belong to is not in the file.
    only_ends = list(read_recording(path, hooks=["on_episode_end"], unknown="data"))
    assert [type(e).__name__ for e in only_ends] == [
        "EpisodeEnd",
        *["UnknownEvent"] * 2,
        "EpisodeEnd",
    ]
    with pytest.raises(ConfigError, match="unknown= takes 'raise' or 'data', not 'skip'"):
        next(read_recording(path, unknown="skip"))  # type: ignore[call-overload]
    planted.assert_not_imported()


@pytest.mark.parametrize("format", FORMATS)
def test_a_tag_the_header_does_not_list_is_unknown_too(tmp_path: Path, format: str) -> None:
    path = tmp_path / f"unlisted.{format}"
    offsets = write(path, genuine_header(tmp_path), [end(0), *things("hb_nowhere")])
    with pytest.raises(
        RecordingError, match=r"an unknown type \(tag 'hb_nowhere', which its header does not"
    ) as info:
        list(read_recording(path))
    assert (info.value.offset, info.value.missing_type) == (offsets[1], None)
    assert info.value.unknown_tag == "hb_nowhere"
    assert "--types path/to/file.py:TheType" in str(info.value)
    (_, first, _) = read_recording(path, unknown="data")
    assert first == UnknownEvent("hb_nowhere", "planted", 0, {"n": 0}, None, offsets[1])


@pytest.mark.parametrize("format", FORMATS)
def test_an_unknown_tag_on_a_malformed_event_is_damage(tmp_path: Path, format: str) -> None:
    path = tmp_path / f"malformed.{format}"
    bad = {"type": "hb_nowhere", "source": 7, "seq": 0}  # a source is a str
    write(path, genuine_header(tmp_path), [end(0), bad])
    for unknown in ("raise", "data"):
        with pytest.raises(RecordingError, match="undecodable") as info:
            list(read_recording(path, unknown=unknown))  # type: ignore[call-overload]
        assert (info.value.missing_type, info.value.unknown_tag) == (None, None)


@pytest.mark.anyio
@pytest.mark.parametrize("format", FORMATS)
async def test_replay_stops_at_the_unknown_type_without_importing_it(
    planted: Planted, tmp_path: Path, format: str
) -> None:
    path = tmp_path / f"planted.{format}"
    offsets = naming(planted, path)
    ends = Ends()
    with pytest.raises(
        RecordingError, match=rf"type {planted.type_name} .*types=\[Thing\]"
    ) as info:
        await replay(path, [ends], hooks=["on_episode_end"])  # hooks= cannot leave it out
    assert ends.ends == ["e0"]  # the prefix was published
    assert (info.value.offset, info.value.missing_type) == (offsets[1], planted.type_name)
    # sources= can: the source is recorded, so no handler could get it.
    again = Ends()
    assert await replay(path, [again], sources=["env_runner:0"]) == 2
    assert again.ends == ["e0", "e1"]
    planted.assert_not_imported()


@pytest.mark.anyio
async def test_replay_refuses_unknown_events_given_as_an_iterable(
    planted: Planted, tmp_path: Path
) -> None:
    path = tmp_path / "planted.msgpack"
    offsets = naming(planted, path)
    events = list(read_recording(path, unknown="data"))
    ends = Ends()
    with pytest.raises(RecordingError, match=rf"^replay got an event of type {planted.type_name}"):
        await replay(events, [ends])
    assert ends.ends == ["e0"]
    kept = [e for e in events if not isinstance(e, UnknownEvent)]
    assert await replay(kept, [Ends()]) == 2
    with pytest.raises(RecordingError, match=rf"at byte offset {offsets[1]}\)$"):
        await replay(events, [Ends()], sources=["planted"])
    planted.assert_not_imported()


@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_replay_into_and_the_fixture_import_nothing(
    planted: Planted,
    tmp_path: Path,
    format: str,
    backend: str,
    hookbus_replay: Any,
) -> None:
    path = tmp_path / f"planted.{format}"
    naming(planted, path)
    for replaying in (replay_into, hookbus_replay):
        with pytest.raises(RecordingError, match=planted.type_name):
            replaying(path, Ends, backend=backend)
    result = replay_into(path, Ends, backend=backend, sources=["env_runner:0"])
    assert result.callbacks[0].ends == ["e0", "e1"]
    planted.assert_not_imported()


def test_the_type_given_or_imported_by_the_reader_decodes(planted: Planted, tmp_path: Path) -> None:
    path = tmp_path / "planted.jsonl"
    naming(planted, path)
    planted.assert_not_imported()
    thing = __import__(planted.module).Thing  # the reader's own choice: now it runs
    assert planted.marker.exists()
    events = list(read_recording(path, types=[thing]))
    assert [type(e).__name__ for e in events] == ["EpisodeEnd", "Thing", "Thing", "EpisodeEnd"]
    assert replay_into(path, Ends, types=[thing]).events == 4


plain = st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=8)
values = st.recursive(
    plain | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)
hostile = st.fixed_dictionaries(
    {"type": st.sampled_from(["episode_end", "hb_nowhere"]) | plain},
    optional={"source": values, "seq": values, "episode_id": values, "x": values},
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(format=st.sampled_from(FORMATS), body=hostile)
def test_reading_unknown_types_as_data_yields_or_raises_a_recording_error(
    tmp_path: Path, format: str, body: dict[str, Any]
) -> None:
    path = tmp_path / f"hostile.{format}"
    offsets = write(path, genuine_header(tmp_path), [end(0), body, end(1)])
    got: list[Any] = []
    error = None
    try:
        got.extend(read_recording(path, unknown="data"))
    except RecordingError as exc:  # anything else fails the test
        error = exc
    if error is not None:
        assert (error.offset, got) == (offsets[1], [end(0)])
        assert error.unknown_tag is None  # damage: data mode never stops at a sound event
    else:
        assert len(got) == 3
        if isinstance(got[1], UnknownEvent):
            assert (got[1].tag, got[1].offset) == (body["type"], offsets[1])
