"""Show a hook's chain order: classes, then callables, then bus.subscribe handlers."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel

from hookbus.events import EpisodeEnd
from hookbus.kernel import Bus, Callback
from hookbus.runners import Episode


class Debug(Callback):
    def on_episode_end(self, *, event: EpisodeEnd, **kwargs: Any) -> None:
        print(f"1. Debug (class) sees episode {event.episode_id}")


class EpisodeReturn(Callback):
    def __init__(self) -> None:
        super().__init__()
        self.total = 0.0

    async def on_episode_end(self, *, episode: Episode, **kwargs: Any) -> None:
        await anyio.lowlevel.checkpoint()  # async handlers are awaited before the next one starts
        self.total += episode.get_return()
        print(f"2. EpisodeReturn (async class) total={self.total}")


def f1(*, event: EpisodeEnd, **kwargs: Any) -> None:
    print("3. f1 (callable)")


def f2(*, event: EpisodeEnd, **kwargs: Any) -> None:
    print("4. f2 (callable)")


def late(*, event: EpisodeEnd, env_index: int | None, **kwargs: Any) -> None:
    print(f"5. late (bus.subscribe), env_index={env_index}")


async def main() -> None:
    async with Bus(callbacks_class=[Debug, EpisodeReturn], on_episode_end=[f1, f2]) as bus:
        bus.subscribe(EpisodeEnd, late)
        episode = Episode(id_="ep-0")  # what an EnvRunner would have built by now
        episode.add_reset(observation=0, info={})
        episode.add_step(1, action=0, reward=1.0, terminated=True, truncated=False, info={})
        event = EpisodeEnd(episode_id=episode.id_, terminated=True)
        await bus.publish(event, episode=episode, env_index=0)
        print(bus.statistics())


if __name__ == "__main__":
    anyio.run(main)
