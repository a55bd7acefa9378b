"""hookbus callbacks for the bridges' tests: they import no framework, so a recording's
replay can run them where RLlib, torch and SB3 are missing. Module-level: Ray actors
import them."""

from __future__ import annotations

from typing import Any, ClassVar

import anyio

from hookbus.kernel import Callback


class StepCounts(Callback):
    """Count env steps and episodes, and log each episode's length (sums add up exactly)."""

    def on_episode_step(self, *, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("hb_steps", 1, reduce="sum")

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("hb_episodes", 1, reduce="sum")
        metrics_logger.log_value("hb_last_chunk_len", len(episode), reduce="mean", window=10_000)


class AsyncEnds(Callback):
    """An async handler that really waits on the loop before logging."""

    async def on_episode_end(self, *, metrics_logger: Any, **kwargs: Any) -> None:
        await anyio.sleep(0.001)
        metrics_logger.log_value("hb_async_ends", 1, reduce="sum")


class Raises(Callback):
    """Raise at every episode's end."""

    def on_episode_end(self, **kwargs: Any) -> None:
        raise RuntimeError("boom from a handler")


class Order(Callback):
    """Note which handler ran, in a list the test reads (in-process runners only)."""

    seen: ClassVar[list[str]] = []

    def __init__(self, name: str = "class") -> None:
        super().__init__()
        self.name = name

    def on_sample_end(self, **kwargs: Any) -> None:
        Order.seen.append(self.name)


class AgentSteps(Callback):
    """Count agent steps from the events (multi-agent: one AgentData per agent that stepped)."""

    def on_episode_step(self, *, event: Any, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("hb_agent_steps", len(event.agents), reduce="sum")
