"""Show the per-subscriber error policies: raise, log, collect and quarantine."""

from __future__ import annotations

import logging
import warnings
from typing import Any

import anyio

from hookbus.events import EpisodeEnd
from hookbus.kernel import Bus, Callback, HookbusWarning


def broken(**kwargs: Any) -> None:
    raise ValueError("broken handler")


def other(**kwargs: Any) -> None:
    raise KeyError("another one")


def steady(**kwargs: Any) -> None:
    print("  steady handler ran")


class Uploader(Callback):
    on_error = "quarantine"  # overrides the bus's policy for this class's handlers

    def on_episode_end(self, **kwargs: Any) -> None:
        raise ConnectionError("upload failed")


async def main() -> None:
    logging.basicConfig(level=logging.CRITICAL)  # keep the example's output short

    print("collect: the whole chain runs, then every error is raised together")
    async with Bus(on_episode_end=[broken, steady, other], on_error="collect") as bus:
        try:
            await bus.publish(EpisodeEnd(seq=41))
        except* (ValueError, KeyError) as group:
            for exc in group.exceptions:
                print(f"  {exc!r}: {exc.__notes__[0]}")

    print("quarantine: after 2 failures the handler is unsubscribed")
    async with Bus(Uploader, quarantine_after=2) as bus:
        bus.subscribe(EpisodeEnd, steady)
        bus.subscribe(EpisodeEnd, broken, on_error="log")  # logged, counted, chain goes on
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", HookbusWarning)
            for _ in range(3):
                await bus.publish(EpisodeEnd())
        print(f"  warning: {caught[0].message}")
        stats = bus.statistics()
        print(f"  quarantined: {stats.quarantined}; errors counted: {stats.errors}")


if __name__ == "__main__":
    anyio.run(main)
