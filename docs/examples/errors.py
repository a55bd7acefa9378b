"""Show both error policies: raise (default, with a note) and log (count and go on)."""

from __future__ import annotations

import logging
from typing import Any

import anyio

from hookbus.events import EpisodeEnd
from hookbus.kernel import Bus


def flaky(**kwargs: Any) -> None:
    raise ValueError("flaky handler")


def steady(**kwargs: Any) -> None:
    print("steady handler ran")


async def main() -> None:
    async with Bus(on_episode_end=[flaky, steady]) as bus:
        try:
            await bus.publish(EpisodeEnd())
        except ValueError as exc:
            print(f"raised: {exc!r}; note: {exc.__notes__[0]}")

    logging.basicConfig(level=logging.CRITICAL)  # keep the example's output short
    async with Bus(on_episode_end=[flaky, steady], on_error="log") as bus:
        await bus.publish(EpisodeEnd())
        print(f"errors counted: {bus.statistics().errors}")


if __name__ == "__main__":
    anyio.run(main)
