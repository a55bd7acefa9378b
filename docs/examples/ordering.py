"""Show ordering constraints: before=/after= and priority, and bus.explain() saying why."""

from __future__ import annotations

from typing import Any

import anyio

from hookbus.events import EpisodeEnd
from hookbus.kernel import Bus, Callback, ConfigError


class Normalize(Callback):
    after = ("Clip",)  # a handler name or a Callback class, or a list or tuple of them

    def on_episode_end(self, **kwargs: Any) -> None:
        print("Normalize runs after Clip")


class Clip(Callback):
    def on_episode_end(self, **kwargs: Any) -> None:
        print("Clip")


def audit(**kwargs: Any) -> None:
    print("audit (subscribed last, but before=Normalize)")


def log_first(**kwargs: Any) -> None:
    print("log_first (priority 5: runs first)")


async def main() -> None:
    async with Bus([Normalize, Clip]) as bus:
        bus.subscribe(EpisodeEnd, audit, before=Normalize)
        bus.subscribe(EpisodeEnd, log_first, priority=5)
        print(bus.explain(EpisodeEnd))
        await bus.publish(EpisodeEnd())
        try:
            bus.subscribe(EpisodeEnd, log_first, before=Clip, after=Normalize)
        except ConfigError as exc:
            print(f"refused: {exc}")


if __name__ == "__main__":
    anyio.run(main)
