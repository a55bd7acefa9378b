"""Show handler statistics, a deadline cancelling a slow async handler, and the watchdog."""

from __future__ import annotations

import logging
import sys
from typing import Any

import anyio

from hookbus.events import EpisodeEnd
from hookbus.kernel import Bus, Callback


class Tracer(Callback):
    def on_episode_end(self, **kwargs: Any) -> None:
        pass


async def stuck_upload(**kwargs: Any) -> None:
    await anyio.sleep(10)  # a hung network call


async def slowish(**kwargs: Any) -> None:
    await anyio.sleep(0.03)


async def main() -> None:
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("  log: %(message)s"))
    handler.addFilter(lambda record: setattr(record, "exc_info", None) or True)  # no tracebacks
    logging.getLogger("hookbus").addHandler(handler)
    async with Bus(Tracer, statistics=True, watchdog=0.02) as bus:
        bus.subscribe(EpisodeEnd, stuck_upload, deadline=0.05, on_error="log")
        bus.subscribe(EpisodeEnd, slowish)
        for seq in range(3):
            await bus.publish(EpisodeEnd(seq=seq))
        stats = bus.statistics()
        print(f"errors: {stats.errors} (the cancelled uploads, logged)")
        for name, timing in stats.handlers["on_episode_end"].items():
            print(f"{name}: {timing.calls} calls, {timing.overruns} overruns")


if __name__ == "__main__":
    anyio.run(main)
