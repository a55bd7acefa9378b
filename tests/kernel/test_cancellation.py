"""Cancellation mid-chain or mid-stream never leaves the bus half-dispatched."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from hookbus.events import EpisodeEnd, EpisodeStep
from hookbus.kernel import Bus, Callback

pytestmark = pytest.mark.anyio


async def test_cancelled_publish_leaves_the_next_publish_whole() -> None:
    log: list[str] = []
    hang = True

    class Waits(Callback):
        async def on_episode_end(self, **kwargs: Any) -> None:
            log.append("waits: start")
            if hang:
                await anyio.sleep_forever()
            log.append("waits: end")

    bus = Bus(Waits, on_episode_end=lambda **kw: log.append("after"))
    with anyio.move_on_after(0.05) as scope:
        await bus.publish(EpisodeEnd())
    assert scope.cancelled_caught
    assert log == ["waits: start"]

    hang = False
    await bus.publish(EpisodeEnd())
    assert log == ["waits: start", "waits: start", "waits: end", "after"]


async def test_cancel_scope_propagates_through_handlers_under_the_log_policy() -> None:
    class Waits(Callback):
        async def on_episode_end(self, **kwargs: Any) -> None:
            await anyio.sleep_forever()

    bus = Bus(Waits, on_error="log")
    with anyio.move_on_after(0.05) as scope:
        await bus.publish(EpisodeEnd())
    assert scope.cancelled_caught
    assert bus.statistics().errors == 0  # cancellation is not a handler error


async def test_publisher_cancelled_on_a_full_stream_leaves_stream_and_bus_usable() -> None:
    bus = Bus()
    async with bus.stream(EpisodeStep, buffer=1, overflow="block") as events:
        await bus.publish(EpisodeStep(seq=0))
        with anyio.move_on_after(0.05) as scope:
            await bus.publish(EpisodeStep(seq=1))  # buffer full: waits, then is cancelled
        assert scope.cancelled_caught
        assert (await events.receive()).seq == 0
        await bus.publish(EpisodeStep(seq=2))
        assert (await events.receive()).seq == 2
    await bus.publish(EpisodeStep(seq=3))  # the stream is gone; nothing waits
    assert not bus.has_subscribers(EpisodeStep)
