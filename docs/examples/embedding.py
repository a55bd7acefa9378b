"""Embed a bus in an async service: a publisher task, a handler, and a bounded stream.

Runs the same code on asyncio and on trio.
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel

from hookbus.events import EpisodeEnd, EpisodeStep
from hookbus.kernel import Bus


async def publisher(bus: Bus, episodes: int) -> None:
    """Stand in for an EnvRunner: publish steps and episode ends."""
    step = bus.dispatcher(EpisodeStep)  # the hot-path form: build events only if wanted
    seq = 0
    for episode in range(episodes):
        for t in range(3):
            if step.call is not None:
                event = EpisodeStep(source="demo:0", seq=seq, episode_id=f"ep{episode}", reward=1.0)
                seq += 1
                if step.is_async:
                    await step.call(event, env_index=t)
                else:
                    step.call(event, env_index=t)
        await bus.publish(EpisodeEnd(source="demo:0", seq=seq, episode_id=f"ep{episode}"))
        seq += 1
        await anyio.lowlevel.checkpoint()


async def service(backend: str) -> None:
    ends: list[str] = []

    def on_end(*, event: EpisodeEnd, **kwargs: Any) -> None:
        ends.append(event.episode_id)

    async with Bus() as bus:
        bus.subscribe(EpisodeEnd, on_end)
        async with bus.stream(EpisodeEnd, buffer=2, overflow="drop_oldest") as events:
            # Nobody listens to EpisodeStep, so the publisher builds no step events at all.
            print(f"{backend}: EpisodeStep has subscribers: {bus.has_subscribers(EpisodeStep)}")
            await publisher(bus, episodes=5)
            bus.close()  # ends the stream once drained
            tail = [event.episode_id async for event in events]
        print(f"{backend}: handler saw {ends}; stream kept {tail}, dropped {events.dropped}")


if __name__ == "__main__":
    for backend in ("asyncio", "trio"):
        anyio.run(service, backend, backend=backend)
