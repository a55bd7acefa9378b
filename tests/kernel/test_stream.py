"""Detached streams: bounded, ordered, back-pressure or drop-oldest, ending with the bus."""

from __future__ import annotations

import anyio
import pytest

from hookbus.events import EpisodeEnd, EpisodeStep, TrainResult
from hookbus.kernel import Bus, BusClosedError, ConfigError, EventStream

pytestmark = pytest.mark.anyio


async def test_block_policy_applies_back_pressure() -> None:
    bus = Bus()
    published: list[int] = []

    async def publisher() -> None:
        for seq in range(3):
            await bus.publish(EpisodeEnd(seq=seq))
            published.append(seq)

    async with bus.stream(EpisodeEnd, buffer=1) as events, anyio.create_task_group() as tg:
        tg.start_soon(publisher)
        await anyio.wait_all_tasks_blocked()
        assert published == [0]  # the second publish waits for room
        received = [(await events.receive()).seq for _ in range(3)]
    assert received == [0, 1, 2]
    assert published == [0, 1, 2]
    assert events.dropped == 0


async def test_drop_oldest_never_waits_and_counts_drops() -> None:
    bus = Bus()
    async with bus.stream(EpisodeEnd, buffer=3, overflow="drop_oldest") as events:
        for seq in range(10):
            await bus.publish(EpisodeEnd(seq=seq))
        assert events.dropped == 7
        assert [(await events.receive()).seq for _ in range(3)] == [7, 8, 9]


async def test_stream_of_all_events_ends_after_the_bus_closes() -> None:
    bus = Bus()
    async with bus.stream(buffer=10) as events:
        await bus.publish(EpisodeStep(seq=1))
        await bus.publish(TrainResult(seq=2))
        bus.close()
        seen = [event async for event in events]
    assert [type(e).__name__ for e in seen] == ["EpisodeStep", "TrainResult"]


async def test_stream_runs_after_every_handler_and_leaves_when_exited() -> None:
    log: list[str] = []
    bus = Bus(on_episode_end=lambda **kw: log.append("handler"))
    async with bus.stream(EpisodeEnd) as events:
        assert bus.statistics().subscribers == {"on_episode_end": 2}
        await bus.publish(EpisodeEnd())
        assert log == ["handler"]
        assert isinstance(await events.receive(), EpisodeEnd)
    assert bus.statistics().subscribers == {"on_episode_end": 1}


async def test_stream_only_sees_its_types() -> None:
    bus = Bus()
    async with bus.stream(EpisodeEnd, "on_train_result", buffer=5) as events:
        await bus.publish(EpisodeStep())
        await bus.publish(TrainResult(seq=1))
        await bus.publish(EpisodeEnd(seq=2))
        got = [await events.receive(), await events.receive()]
    assert [(type(e).__name__, e.seq) for e in got] == [("TrainResult", 1), ("EpisodeEnd", 2)]


async def test_bad_stream_options_are_refused() -> None:
    bus = Bus()
    with pytest.raises(
        ConfigError, match="unknown overflow policy 'drop_newest'; allowed: 'block', 'drop_oldest'"
    ):
        async with bus.stream(EpisodeEnd, overflow="drop_newest"):
            pass
    with pytest.raises(ConfigError, match="stream buffer must be a positive int, got 0"):
        async with bus.stream(EpisodeEnd, buffer=0):
            pass
    assert bus.statistics().subscribers == {}
    bus.close()
    with pytest.raises(BusClosedError):
        async with bus.stream(EpisodeEnd):
            pass


# --- a stream closed while another task iterates it -----------------------------------------


async def iterate(events: EventStream, seen: list[object], resume: anyio.Event | None) -> None:
    """Iterate ``events`` to its end, recording each event and how the iteration ended."""
    try:
        async for event in events:
            seen.append(event.seq)
            if resume is not None:
                await resume.wait()  # busy with this event while the stream's block exits
        seen.append("ended")
    except Exception as exc:  # the test shows what it was; it must not be anyio's
        seen.append(exc)


async def test_an_iteration_waiting_in_another_task_ends_when_the_block_exits() -> None:
    bus = Bus()
    seen: list[object] = []
    async with anyio.create_task_group() as tg:
        async with bus.stream(EpisodeEnd, buffer=10) as events:
            tg.start_soon(iterate, events, seen, None)
            await bus.publish(EpisodeEnd(seq=0))
            await bus.publish(EpisodeEnd(seq=1))
            await anyio.wait_all_tasks_blocked()  # the other task waits for the next event
    assert seen == [0, 1, "ended"]


async def test_an_iteration_busy_in_another_task_ends_at_its_next_step() -> None:
    bus = Bus()
    seen: list[object] = []
    resume = anyio.Event()
    async with anyio.create_task_group() as tg:
        async with bus.stream(EpisodeEnd, buffer=10) as events:
            tg.start_soon(iterate, events, seen, resume)
            await bus.publish(EpisodeEnd(seq=0))
            await bus.publish(EpisodeEnd(seq=1))  # buffered when the block exits: dropped
            await anyio.wait_all_tasks_blocked()
        resume.set()
    assert seen == [0, "ended"]


async def test_the_bus_closing_then_the_block_exiting_ends_an_iteration_in_another_task() -> None:
    bus = Bus()
    seen: list[object] = []
    async with anyio.create_task_group() as tg:
        async with bus.stream(buffer=10) as events:
            tg.start_soon(iterate, events, seen, None)
            await bus.publish(EpisodeStep(seq=0))
            await anyio.wait_all_tasks_blocked()
            bus.close()  # wakes the waiting task, which has not run yet when the block exits
    assert seen == [0, "ended"]


async def test_receive_after_the_block_exited_is_the_end_of_the_stream() -> None:
    bus = Bus()
    async with bus.stream(EpisodeEnd) as events:
        await bus.publish(EpisodeEnd(seq=0))
    with pytest.raises(anyio.EndOfStream):
        await events.receive()
    assert [event async for event in events] == []
