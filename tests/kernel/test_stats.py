"""Handler statistics, deadlines and the watchdog, on both backends."""

from __future__ import annotations

import logging
import time
from typing import Any

import anyio
import pytest

from hookbus.events import EpisodeEnd
from hookbus.kernel import Bus, Callback, ConfigError, HandlerStatistics

pytestmark = pytest.mark.anyio


async def sleepy(**kwargs: Any) -> None:
    await anyio.sleep(1)


def recorder(log: list[str], name: str) -> Any:
    def handler(**kwargs: Any) -> None:
        log.append(name)

    return handler


async def test_statistics_count_calls_and_report_percentiles() -> None:
    async def quick(**kwargs: Any) -> None:
        await anyio.lowlevel.checkpoint()

    bus = Bus(on_episode_end=[recorder([], "f"), quick], statistics=True)
    for _ in range(5):
        await bus.publish(EpisodeEnd())
    handlers = bus.statistics().handlers["on_episode_end"]
    assert len(handlers) == 2
    for stats in handlers.values():
        assert isinstance(stats, HandlerStatistics)
        assert stats.calls == 5
        assert 0 <= stats.p50 <= stats.p99


async def test_statistics_are_off_by_default() -> None:
    bus = Bus(on_episode_end=recorder([], "f"))
    await bus.publish(EpisodeEnd())
    assert bus.statistics().handlers == {}


async def test_an_async_handler_past_its_deadline_is_cancelled_and_raises_timeout() -> None:
    log: list[str] = []
    bus = Bus()
    bus.subscribe(EpisodeEnd, sleepy, deadline=0.05)
    bus.subscribe(EpisodeEnd, recorder(log, "after"))
    with pytest.raises(TimeoutError, match=r"handler .*sleepy of hook 'on_episode_end' ran past"):
        await bus.publish(EpisodeEnd())
    assert log == []


async def test_a_deadline_timeout_goes_through_the_error_policy(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log: list[str] = []

    class Slow(Callback):
        deadline = 0.05
        on_error = "log"

        async def on_episode_end(self, **kwargs: Any) -> None:
            await anyio.sleep(1)

    bus = Bus(Slow, on_episode_end=recorder(log, "after"))
    with caplog.at_level(logging.ERROR, logger="hookbus"):
        await bus.publish(EpisodeEnd())
    assert log == ["after"]
    assert "Slow.on_episode_end" in caplog.text
    assert "TimeoutError" in caplog.text
    assert bus.statistics().errors == 1


async def test_calls_cancelled_at_their_deadline_count_as_lasting_it() -> None:
    # Every call timed out: the percentiles are the deadline, not NaN.
    bus = Bus(statistics=True, on_error="log")
    bus.subscribe(EpisodeEnd, sleepy, deadline=0.02)
    for _ in range(3):
        await bus.publish(EpisodeEnd())
    (stats,) = bus.statistics().handlers["on_episode_end"].values()
    assert (stats.calls, stats.overruns, stats.p50, stats.p99) == (3, 3, 0.02, 0.02)


async def test_a_bus_wide_deadline_applies_to_every_handler() -> None:
    bus = Bus(deadline=0.05, on_error="collect")
    bus.subscribe(EpisodeEnd, sleepy)
    bus.subscribe(EpisodeEnd, sleepy, deadline=5)  # its own deadline overrides the bus's
    with anyio.move_on_after(0.5) as outer:  # the second runs to its end: cut it short here
        with pytest.raises(ExceptionGroup):
            await bus.publish(EpisodeEnd())
    assert outer.cancelled_caught


async def test_an_outer_cancellation_is_not_turned_into_a_timeout() -> None:
    bus = Bus(deadline=5)
    bus.subscribe(EpisodeEnd, sleepy)
    with anyio.move_on_after(0.05) as scope:
        await bus.publish(EpisodeEnd())
    assert scope.cancelled_caught
    assert bus.statistics().errors == 0


async def test_a_sync_handler_past_its_deadline_is_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def blocking(**kwargs: Any) -> None:
        time.sleep(0.06)

    bus = Bus(statistics=True)
    bus.subscribe(EpisodeEnd, blocking, deadline=0.01)
    with caplog.at_level(logging.WARNING, logger="hookbus"):
        await bus.publish(EpisodeEnd())
    assert "blocking of hook 'on_episode_end'" in caplog.text
    assert "past its deadline" in caplog.text
    (stats,) = bus.statistics().handlers["on_episode_end"].values()
    assert stats.overruns == 1


async def test_an_async_handler_that_blocks_past_its_deadline_is_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log: list[str] = []

    async def blocking(**kwargs: Any) -> None:
        time.sleep(0.06)  # noqa: ASYNC251 - never awaits: its cancel scope cannot fire

    bus = Bus(statistics=True)
    bus.subscribe(EpisodeEnd, blocking, deadline=0.01)
    bus.subscribe(EpisodeEnd, recorder(log, "after"))
    with caplog.at_level(logging.WARNING, logger="hookbus"):
        await bus.publish(EpisodeEnd())
    assert log == ["after"]  # it ran to its end: nothing raised, the chain went on
    assert "async handler" in caplog.text
    assert "blocking of hook 'on_episode_end'" in caplog.text
    assert "past its deadline of 0.01 s" in caplog.text
    assert "blocked the event loop" in caplog.text
    (stats, _) = bus.statistics().handlers["on_episode_end"].values()
    assert stats.overruns == 1


async def test_an_async_handler_within_its_deadline_is_no_overrun(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def quick(**kwargs: Any) -> None:
        await anyio.lowlevel.checkpoint()

    bus = Bus(statistics=True)
    bus.subscribe(EpisodeEnd, quick, deadline=5)
    with caplog.at_level(logging.WARNING, logger="hookbus"):
        await bus.publish(EpisodeEnd())
    assert "deadline" not in caplog.text
    (stats,) = bus.statistics().handlers["on_episode_end"].values()
    assert (stats.calls, stats.overruns) == (1, 0)


async def test_the_watchdog_names_a_slow_handler_and_its_hook(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def slowish(**kwargs: Any) -> None:
        await anyio.sleep(0.06)

    bus = Bus(watchdog=0.01)
    bus.subscribe(EpisodeEnd, slowish)
    with caplog.at_level(logging.WARNING, logger="hookbus"):
        await bus.publish(EpisodeEnd())
    assert "watchdog" in caplog.text
    assert "slowish of hook 'on_episode_end'" in caplog.text


def test_bad_deadlines_are_refused() -> None:
    with pytest.raises(ConfigError, match="deadline must be None or a number of seconds > 0"):
        Bus(deadline=0)
    with pytest.raises(ConfigError, match="watchdog must be"):
        Bus(watchdog="1s")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="deadline must be"):
        Bus().subscribe(EpisodeEnd, sleepy, deadline=-1)
