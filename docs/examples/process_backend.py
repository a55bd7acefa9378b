"""Sample in two worker processes; an observer on the Algorithm's bus sees all their events."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hookbus.kernel import Callback
from hookbus.runners import PPOConfig


class CountEpisodes(Callback):
    """Runs inside each worker process, where the episodes happen."""

    def on_episode_end(self, *, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("episodes_counted_in_workers", 1, reduce="sum")


class PerSource(Callback):
    """An observer: stays on the Algorithm's bus and receives every worker's events."""

    observer = True

    def __init__(self) -> None:
        self.ends: Counter[str] = Counter()

    def on_episode_end(self, *, event: Any, **kwargs: Any) -> None:
        self.ends[event.source] += 1


if __name__ == "__main__":
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_env_runners=2, backend="process")
        .callbacks([CountEpisodes, PerSource])
        .debugging(seed=0)
    )
    with config.build() as algo:
        result = algo.train()
        observer = algo.bus.callbacks[1]
    print(
        f"workers counted {result['env_runners']['episodes_counted_in_workers']} episodes; "
        f"the observer saw {dict(observer.ends)}"
    )  # type: ignore[attr-defined]
