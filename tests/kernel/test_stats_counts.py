"""Statistics left on: exact call counts, sampled latencies, on both backends."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from hookbus.events import EpisodeEnd, EpisodeStep
from hookbus.kernel import Bus

pytestmark = pytest.mark.anyio


def calls(bus: Bus, hook: str = "on_episode_end") -> dict[str, int]:
    """Return each handler's call count, by its bare function name."""
    handlers = bus.statistics().handlers.get(hook, {})
    return {name.rsplit(".", 1)[-1]: stats.calls for name, stats in handlers.items()}


def first(**kwargs: Any) -> None:
    pass


def last(**kwargs: Any) -> None:
    pass


async def alast(**kwargs: Any) -> None:
    await anyio.lowlevel.checkpoint()


async def test_counts_are_exact_although_latencies_are_sampled() -> None:
    bus = Bus(on_episode_end=[first, alast], statistics=True)
    for _ in range(200):
        await bus.publish(EpisodeEnd())
    assert calls(bus) == {"first": 200, "alast": 200}


async def test_the_first_publish_is_timed() -> None:
    bus = Bus(on_episode_end=first, statistics=True)
    await bus.publish(EpisodeEnd())
    (stats,) = bus.statistics().handlers["on_episode_end"].values()
    assert stats.calls == 1
    assert stats.p50 >= 0  # not NaN: the first publish is one of the timed ones


async def test_only_one_publish_in_64_is_timed() -> None:
    # Slow on the timed publishes (0, 64, 128) only: if every call were timed, the median
    # would be a fast call's microseconds.
    count = 0

    def slow_when_sampled(**kwargs: Any) -> None:
        nonlocal count
        if count % 64 == 0:
            time.sleep(0.003)
        count += 1

    bus = Bus(on_episode_end=slow_when_sampled, statistics=True)
    for _ in range(130):
        await bus.publish(EpisodeEnd())
    (stats,) = bus.statistics().handlers["on_episode_end"].values()
    assert stats.calls == 130
    assert stats.p50 >= 0.003


@pytest.mark.parametrize("timed", [False, True], ids=["sampled", "every call"])
async def test_a_raising_handler_counts_and_the_rest_of_the_chain_does_not(
    timed: bool,
) -> None:
    failures = 2

    def flaky(**kwargs: Any) -> None:
        nonlocal failures
        if failures:
            failures -= 1
            raise ValueError("flaky")

    bus = Bus(on_episode_end=[first, flaky, last], statistics=True, watchdog=60 if timed else None)
    for _ in range(5):
        try:
            await bus.publish(EpisodeEnd())
        except ValueError:
            pass
    assert calls(bus) == {"first": 5, "flaky": 5, "last": 3}


async def test_under_log_a_raising_handler_cuts_nothing_short() -> None:
    def boom(**kwargs: Any) -> None:
        raise ValueError("boom")

    bus = Bus(statistics=True)
    bus.subscribe(EpisodeEnd, boom, on_error="log")
    bus.subscribe(EpisodeEnd, last)
    for _ in range(3):
        await bus.publish(EpisodeEnd())
    assert calls(bus) == {"boom": 3, "last": 3}


async def test_a_cancelled_publish_counts_no_handler_after_the_cancelled_one() -> None:
    async def stuck(**kwargs: Any) -> None:
        await anyio.sleep_forever()

    bus = Bus(on_episode_end=[first, stuck, last], statistics=True)
    with anyio.move_on_after(0.01):
        await bus.publish(EpisodeEnd())
    assert calls(bus) == {"first": 1, "stuck": 1}


async def test_counts_survive_chain_changes() -> None:
    bus = Bus(on_episode_end=first, statistics=True)
    for _ in range(3):
        await bus.publish(EpisodeEnd())
    bus.subscribe(EpisodeEnd, last)  # the chain is compiled again, with a new counter
    for _ in range(2):
        await bus.publish(EpisodeEnd())
    bus.unsubscribe(EpisodeEnd, last)
    await bus.publish(EpisodeEnd())
    assert calls(bus) == {"first": 6, "last": 2}


async def test_forwarded_events_count_for_observers() -> None:
    bus = Bus(statistics=True)
    bus.subscribe(EpisodeStep, last)  # subscribe() handlers observe forwarded events
    await bus.publish(EpisodeStep())
    for _ in range(4):
        await bus.forward(EpisodeStep())
    assert calls(bus, "on_episode_step") == {"last": 5}


async def test_a_quarantined_handler_keeps_its_count() -> None:
    def boom(**kwargs: Any) -> None:
        raise ValueError("boom")

    bus = Bus(on_episode_end=[boom, last], on_error="quarantine", statistics=True)
    for _ in range(2):
        await bus.publish(EpisodeEnd())
    with pytest.warns(Warning, match="quarantine"):
        await bus.publish(EpisodeEnd())  # the third failure
    for _ in range(2):
        await bus.publish(EpisodeEnd())
    assert calls(bus) == {"boom": 3, "last": 5}
