"""A Recorder writes only what its reader reads back: floats that are not finite round-trip
in both formats, and nesting is refused at write beyond what a reader is sure to read."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest

from hookbus.events import (
    AgentData,
    EpisodeCreated,
    EpisodeEnd,
    EpisodeStart,
    EpisodeStep,
    LearnerUpdateEnd,
)
from hookbus.kernel import (
    MAX_DEPTH,
    Bus,
    Callback,
    Publisher,
    Recorder,
    RecordingError,
    read_recording,
    replay,
)

sys.path.insert(0, str(Path(__file__).parents[1]))
from shop_events import OrderPlaced

sys.path.insert(0, str(Path(__file__).parent))
from crafted_recordings import genuine_header, write

pytestmark = pytest.mark.anyio
FORMATS = ["msgpack", "jsonl"]
NOT_FINITE = [math.nan, math.inf, -math.inf]


def same(a: Any, b: Any) -> bool:
    """Equal, NaN equal to NaN (of the same sign), for floats, lists and dicts."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b) and math.copysign(1, a) == math.copysign(1, b)
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, msgspec.Struct) and isinstance(b, msgspec.Struct):
        return type(a) is type(b) and same(msgspec.structs.asdict(a), msgspec.structs.asdict(b))
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.tobytes() == b.tobytes() and a.dtype == b.dtype
    return bool(a == b)


def episode(source: str, episode_id: str, rewards: list[float]) -> list[Any]:
    """One episode's events, numbered from 0, with ``rewards`` for its steps."""
    events: list[Any] = [
        EpisodeCreated(episode_id=episode_id),
        EpisodeStart(episode_id=episode_id, observation=np.zeros(2)),
    ]
    for i, reward in enumerate(rewards):
        last = i == len(rewards) - 1
        events.append(
            EpisodeStep(
                episode_id=episode_id,
                reward=reward,
                observation=np.array([reward, -reward]),  # NaN and inf inside arrays too
                info={"reward_ctrl": reward, "terms": [reward, {"inner": -reward}]},
                terminated=last,
            )
        )
    events.append(EpisodeEnd(episode_id=episode_id, terminated=True))
    return [msgspec.structs.replace(e, source=source, seq=n) for n, e in enumerate(events)]


def run() -> list[Any]:
    """Episodes whose rewards are NaN, +inf and -inf, and learner stats that are not finite."""
    events = episode("env_runner:0", "nan", [1.0, math.nan])
    events += episode("env_runner:1", "inf", [math.inf, 2.0])
    events += episode("env_runner:2", "-inf", [-math.inf])
    events.append(LearnerUpdateEnd(source="learner", stats={"loss": math.nan, "kl": math.inf}))
    multi = AgentData(agent_id="a", reward=-math.inf, info={"x": math.nan})
    events.append(EpisodeStep(source="env_runner:3", episode_id="m", agents=[multi]))
    return events


class Returns(Callback):
    """Keep each episode's return and every step's reward, as a handler sees them."""

    def __init__(self) -> None:
        super().__init__()
        self.returns: dict[str, float] = {}
        self.rewards: list[float] = []
        self.orders: list[float] = []

    def on_episode_step(self, *, event: EpisodeStep, **kwargs: Any) -> None:
        self.rewards.append(event.reward)

    def on_episode_end(self, *, event: EpisodeEnd, episode: Any, **kwargs: Any) -> None:
        if episode is not None:  # replay rebuilds it; a bare publish passes none
            self.returns[event.episode_id] = episode.get_return()

    def on_order_placed(self, *, event: OrderPlaced, **kwargs: Any) -> None:
        self.orders.append(event.total)


@pytest.mark.parametrize("fmt", FORMATS)
async def test_floats_that_are_not_finite_round_trip_through_record_read_and_replay(
    tmp_path: Path, fmt: str
) -> None:
    path = tmp_path / f"run.{fmt}"
    events = run()
    live = Returns()
    async with Bus([live, Recorder(path, format=fmt)]) as bus:
        for event in events:
            await bus.publish(event)
        shop = Publisher(bus, "shop")
        for total in NOT_FINITE:  # a float field of a type of yours
            await shop.publish(OrderPlaced, order_id="o", total=total)
    back = list(read_recording(path, types=[OrderPlaced]))
    assert len(back) == len(events) + 3  # reading went on past every one of them
    for written, read in zip(events, back, strict=False):
        assert same(written, read), (written, read)
    assert same([e.total for e in back[-3:]], NOT_FINITE)
    again = Returns()
    assert await replay(path, [again], types=[OrderPlaced]) == len(back)
    assert same(again.returns, {"nan": math.nan, "inf": math.inf, "-inf": -math.inf})
    assert same(again.rewards, live.rewards)
    assert same(again.orders, NOT_FINITE)


def test_json_lines_hold_no_null_for_a_float(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    recorder = Recorder(path, format="jsonl")
    for n, reward in enumerate(NOT_FINITE):
        recorder.record(event=EpisodeStep(seq=n, reward=reward, info={"none": None}))
    recorder.close()
    lines = path.read_bytes().splitlines()[1:]
    assert [line.count(b"null") for line in lines] == [1, 1, 1]  # the info's None only
    assert b'"reward":{"__float__":"nan"}' in lines[0]
    assert b'"reward":{"__float__":"-inf"}' in lines[2]
    assert [e.info for e in read_recording(path)] == [{"none": None}] * 3


def test_a_negative_nan_keeps_its_sign(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    recorder = Recorder(path, format="jsonl")
    recorder.record(event=EpisodeStep(reward=-math.nan))
    recorder.close()
    (step,) = read_recording(path)
    assert math.isnan(step.reward)
    assert math.copysign(1, step.reward) == -1


def test_a_float_stand_in_saying_no_float_is_damage_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    fields = {"type": "episode_step", "source": "", "seq": 1, "reward": {"__float__": "NaN!"}}
    offsets = write(path, genuine_header(tmp_path), [EpisodeStep(seq=0), fields])
    with pytest.raises(RecordingError, match=r"undecodable .*malformed float stand-in") as info:
        list(read_recording(path))
    assert info.value.offset == offsets[1]


def nested(levels: int, leaf: Any = 1) -> Any:
    """Return ``leaf`` inside ``levels`` containers, dicts and lists by turns."""
    value = leaf
    for i in range(levels):
        value = {"k": value} if i % 2 else [value]
    return value


class Infos(Callback):
    def __init__(self) -> None:
        super().__init__()
        self.infos: list[Any] = []

    def on_episode_step(self, *, event: EpisodeStep, **kwargs: Any) -> None:
        self.infos.append(event.info)


@pytest.mark.parametrize("fmt", FORMATS)
async def test_nesting_as_deep_as_max_depth_is_written_read_and_replayed(
    tmp_path: Path, fmt: str
) -> None:
    path = tmp_path / f"deep.{fmt}"
    # The event is a level, its info dict another: MAX_DEPTH in all.
    info = {"deep": nested(MAX_DEPTH - 2, leaf=np.arange(3.0))}
    recorder = Recorder(path, format=fmt)
    recorder.record(event=EpisodeStep(seq=0, info=info))
    recorder.close()
    (step,) = read_recording(path)
    assert same(step.info, info)
    seen = Infos()
    assert await replay(path, [seen]) == 1  # from inside replay's (deeper) stack
    assert same(seen.infos, [info])


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    ("field", "event"),
    [
        ("info", EpisodeStep(seq=1, info={"deep": nested(MAX_DEPTH - 1)})),  # one too many
        ("info", EpisodeStep(seq=1, info={"deep": nested(500)})),
        ("observation", EpisodeStep(seq=1, observation=nested(MAX_DEPTH))),
        ("agents", EpisodeStep(seq=1, agents=[AgentData(agent_id=0, action=nested(MAX_DEPTH))])),
    ],
    ids=["one-too-deep", "500-deep", "observation", "in-an-agent"],
)
def test_nesting_deeper_than_max_depth_is_refused_at_write_naming_event_field_and_limit(
    tmp_path: Path, fmt: str, field: str, event: EpisodeStep
) -> None:
    path = tmp_path / f"deep.{fmt}"
    recorder = Recorder(path, format=fmt)
    recorder.record(event=EpisodeStep(seq=0))
    message = (
        rf"cannot record EpisodeStep \(on_episode_step\) in .*: its field '{field}' nests "
        rf"containers .* deeper than MAX_DEPTH \({MAX_DEPTH} levels.*it was not written"
    )
    with pytest.raises(RecordingError, match=message):
        recorder.record(event=event)
    recorder.record(event=EpisodeStep(seq=2))  # the recorder goes on
    recorder.close()
    assert [e.seq for e in read_recording(path)] == [0, 2]  # nothing of seq 1 was written


@pytest.mark.parametrize("fmt", FORMATS)
def test_nesting_is_measured_in_long_events_too(tmp_path: Path, fmt: str) -> None:
    # Long enough to skip the counting of bytes that could open a container.
    image = np.zeros((64, 64), np.uint8)
    deep = EpisodeStep(seq=0, observation=image, info={"deep": nested(MAX_DEPTH - 1)})
    recorder = Recorder(tmp_path / f"long.{fmt}", format=fmt)
    recorder.record(event=msgspec.structs.replace(deep, info={"deep": nested(MAX_DEPTH - 2)}))
    with pytest.raises(RecordingError, match="its field 'info' nests"):
        recorder.record(event=deep)
    recorder.close()


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_reader_reads_deeper_than_max_depth_in_both_formats(tmp_path: Path, fmt: str) -> None:
    # Files this hookbus never writes (older ones, others'): JSON lines read as deep as
    # MessagePack, as far as the stack lets them.
    path = tmp_path / f"deeper.{fmt}"
    info = {"deep": nested(600)}
    write(path, genuine_header(tmp_path), [EpisodeStep(seq=0, info=info)])
    (step,) = read_recording(path)
    assert step.info == info
