"""Recording and replaying events of your own types: named in the header, decoded when the
reader has defined them (never imported by those names)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import msgspec
import numpy as np
import pytest

from hookbus.events import EpisodeEnd
from hookbus.kernel import (
    Bus,
    Recorder,
    RecordingError,
    check_lifecycle,
    read_recording,
    read_recording_header,
    replay,
    replay_into,
)

sys.path.insert(0, str(Path(__file__).parents[1]))
from shop_events import OrderPlaced, PaymentFailed, Revenue, SensorRead, shop_day

TESTS = Path(__file__).parents[1]

FORMATS = ["msgpack", "jsonl"]


@pytest.mark.anyio
@pytest.mark.parametrize("format", FORMATS)
async def test_a_recorder_records_user_events_and_lists_their_types(
    tmp_path: Path, format: str
) -> None:
    path = tmp_path / f"shop.{format}"
    async with Bus([Recorder(path, format=format)]) as bus:
        await shop_day(bus)
    header = read_recording_header(path)
    assert header.event_types["order_placed"] == "shop_events:OrderPlaced"
    assert header.event_types["payment_failed"] == "shop_events:PaymentFailed"
    events = list(read_recording(path))
    assert [type(e).__name__ for e in events[:3]] == ["OrderPlaced", "SensorRead", "OrderPlaced"]
    assert isinstance(events[-1], EpisodeEnd)
    assert sum(isinstance(e, PaymentFailed) for e in events) == 3
    reading = next(e for e in events if isinstance(e, SensorRead) and e.seq == 4)
    assert reading.values.dtype == np.float32
    np.testing.assert_array_equal(reading.values, np.linspace(0, 1, 5, dtype=np.float32) * 4)
    only = list(read_recording(path, hooks=["on_payment_declined"], types=[PaymentFailed]))
    assert [e.order_id for e in only] == ["o3", "o10", "o17"]  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_a_recorder_of_chosen_hooks_lists_only_those_types(tmp_path: Path) -> None:
    path = tmp_path / "orders.msgpack"
    async with Bus([Recorder(path, hooks=["on_order_placed", "on_episode_end"])]) as bus:
        assert not bus.has_subscribers(SensorRead)  # not recorded: never built
        await shop_day(bus)
    assert read_recording_header(path).event_types == {"order_placed": "shop_events:OrderPlaced"}
    assert {type(e).__name__ for e in read_recording(path)} == {"OrderPlaced", "EpisodeEnd"}


@pytest.mark.anyio
async def test_replay_publishes_user_events_into_the_same_handlers(tmp_path: Path) -> None:
    path = tmp_path / "shop.msgpack"
    live = Revenue()
    async with Bus([live, Recorder(path)]) as bus:
        await shop_day(bus)
    again = Revenue()
    count = await replay(path, [again], types=[OrderPlaced])
    assert count == 20 + 3 + 20 + 1
    assert msgspec.msgpack.encode(again.get_state()) == msgspec.msgpack.encode(live.get_state())


@pytest.mark.anyio
async def test_check_lifecycle_leaves_user_events_alone(hookbus_recording: Path) -> None:
    hooks = list(read_recording(hookbus_recording))
    mixed: list[Any] = []
    for i, event in enumerate(hooks):
        mixed.append(event)
        if i % 50 == 0:  # interleaved, numbered by hand, under the runner's source even
            mixed.append(OrderPlaced(source=event.source, seq=0, order_id="x", total=1.0))
    summary = check_lifecycle(mixed)
    plain = check_lifecycle(hooks)
    assert summary.events == len(mixed)
    assert summary.user_events == len(mixed) - len(hooks) > 0
    assert (summary.sources, summary.episodes) == (plain.sources, plain.episodes)


# --- across processes: recorded in one, replayed in this one -------------------------------

RECORD_SCRIPT = textwrap.dedent(
    """
    import sys
    import anyio
    import msgspec
    sys.path[:0] = sys.argv[3:]
    from hookbus.kernel import Bus, Recorder
    from shop_events import Revenue, shop_day

    async def main(path, fmt):
        revenue = Revenue()
        async with Bus([revenue, Recorder(path, format=fmt)]) as bus:
            await shop_day(bus)
        sys.stdout.buffer.write(msgspec.msgpack.encode(revenue.get_state()))

    anyio.run(main, sys.argv[1], sys.argv[2])
    """
)


def record_in_another_process(path: Path, format: str, *paths: Path) -> bytes:
    done = subprocess.run(
        [sys.executable, "-c", RECORD_SCRIPT, str(path), format, *map(str, paths)],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return done.stdout


@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_recorded_in_one_process_replayed_bit_identical_in_a_test(
    tmp_path: Path, format: str, backend: str, hookbus_replay: Callable[..., Any]
) -> None:
    path = tmp_path / f"shop.{format}"
    recorded_state = record_in_another_process(path, format, TESTS)
    result = hookbus_replay(path, Revenue, backend=backend)  # the pytest plugin's fixture
    (revenue,) = result.callbacks
    assert msgspec.msgpack.encode(revenue.get_state()) == recorded_state
    assert result.events == 44


GHOST_MODULE = textwrap.dedent(
    """
    from hookbus.events import BaseEvent

    class Ghost(BaseEvent, frozen=True, kw_only=True, tag="hb_ghost"):
        n: int = 0
    """
)

PHANTOM = GHOST_MODULE.replace("Ghost", "Phantom").replace("hb_ghost", "hb_phantom")

GHOST_SCRIPT = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[2])
    from hookbus.kernel import Bus, Publisher, Recorder
    from hb_ghost_events import Ghost
    import anyio

    async def main():
        async with Bus([Recorder(sys.argv[1])]) as bus:
            ghosts = Publisher(bus, "ghosts")
            for n in range(3):
                await ghosts.publish(Ghost, n=n)

    anyio.run(main)
    """
)


def test_a_type_that_cannot_be_found_is_one_recording_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    modules = tmp_path / "modules"
    modules.mkdir()
    (modules / "hb_ghost_events.py").write_text(GHOST_MODULE)
    path = tmp_path / "ghosts.msgpack"
    env = {**os.environ, "PYTHONPATH": ""}
    subprocess.run(
        [sys.executable, "-c", GHOST_SCRIPT, str(path), str(modules)], check=True, env=env
    )
    assert read_recording_header(path).event_types == {"hb_ghost": "hb_ghost_events:Ghost"}
    with pytest.raises(
        RecordingError,
        match=r"holds an event of type hb_ghost_events:Ghost \(tag 'hb_ghost'\), which this "
        r"process has not defined; reading a recording never imports .*pass the type: "
        r"types=\[Ghost\] \(read_recording, replay, replay_into\), or --types "
        r"hb_ghost_events.py:Ghost .* \(at byte offset \d+\)",
    ) as info:
        next(read_recording(path))
    assert info.value.missing_type == "hb_ghost_events:Ghost"
    assert info.value.unknown_tag == "hb_ghost"
    assert info.value.offset > 8  # the first Ghost's frame: the header read fine
    monkeypatch.syspath_prepend(str(modules))  # importable by the name the header records...
    with pytest.raises(RecordingError, match="hb_ghost_events:Ghost") as again:
        next(read_recording(path))  # ... and still not imported: a file names no code
    assert again.value.offset == info.value.offset
    assert "hb_ghost_events" not in sys.modules
    ghost = importlib.import_module("hb_ghost_events").Ghost  # the reader's own choice
    assert [e.n for e in read_recording(path)] == [0, 1, 2]  # type: ignore[attr-defined]
    assert [e.n for e in read_recording(path, types=[ghost])] == [0, 1, 2]  # type: ignore[attr-defined]


def test_a_type_defined_in_a_script_needs_to_be_given(tmp_path: Path) -> None:
    script = tmp_path / "service.py"
    script.write_text(
        PHANTOM
        + textwrap.dedent(
            """
            import sys
            import anyio
            from hookbus.kernel import Bus, Publisher, Recorder

            async def main():
                async with Bus([Recorder(sys.argv[1], format="jsonl")]) as bus:
                    await Publisher(bus, "s").publish(Phantom, n=7)

            anyio.run(main)
            """
        )
    )
    path = tmp_path / "script.jsonl"
    subprocess.run([sys.executable, str(script), str(path)], check=True)
    with pytest.raises(RecordingError, match=r"__main__:Phantom .*defined in a script run as"):
        list(read_recording(path))
    with pytest.raises(RecordingError, match=r"__main__:Phantom"):
        replay_into(path)  # the same error wherever a recording is read
    namespace: dict[str, Any] = {}
    exec(compile(PHANTOM, "the test's own definition", "exec"), namespace)
    (event,) = read_recording(path, types=[namespace["Phantom"]])
    assert type(event) is namespace["Phantom"]
    assert event.n == 7  # type: ignore[attr-defined]


def test_replay_into_takes_types_and_the_hooks_of_user_types(tmp_path: Path) -> None:
    path = tmp_path / "shop.msgpack"
    with Bus([Recorder(path)]) as bus:
        anyio.run(shop_day, bus)
    result = replay_into(path, Revenue, hooks=["on_order_placed"], types=[OrderPlaced])
    assert result.events == 20
    assert result.callbacks[0].declined == 0


def test_a_listed_type_that_never_occurs_needs_not_be_found(tmp_path: Path) -> None:
    path = tmp_path / "listed.jsonl"
    recorder = Recorder(path, format="jsonl")
    recorder.close()
    header = read_recording_header(path)
    assert "order_placed" in header.event_types  # every type defined when it was made
    # Rewrite its header as if a type lost since had been listed: nothing of it was recorded.
    lines = path.read_bytes().splitlines(keepends=True)
    import json
    import zlib

    raw = json.loads(lines[0])
    del raw["crc32"]
    raw["event_types"]["hb_lost"] = "hb_lost_module:Lost"
    body = json.dumps(raw, separators=(",", ":")).encode()
    lines[0] = body[:-1] + b',"crc32":"%08x"}\n' % zlib.crc32(body)
    path.write_bytes(b"".join(lines))
    assert read_recording_header(path).event_types["hb_lost"] == "hb_lost_module:Lost"
    assert list(read_recording(path)) == []
