"""The seeds' global counter: one counter for the whole run, incremented from every runner.

The Counter is a named service of the Algorithm's bus. Callbacks run where the episodes
happen (in worker processes, or Ray actors) and reach it as
``env_runner.bus.services.get("counter")``; its method calls run on the one counter and
return their results. Run: ``python docs/examples/global_counter.py [process|ray|inline]``.
"""

from __future__ import annotations

import sys
from typing import Any

from hookbus.kernel import Callback
from hookbus.runners import PPOConfig


class Counter:
    """Count across all runners: ``inc`` from anywhere, ``get`` the total."""

    def __init__(self) -> None:
        self.count = 0

    def inc(self, n: int = 1) -> int:
        self.count += n
        return self.count

    def get(self) -> int:
        return self.count


class CountEpisodes(Callback):
    """Runs where the episodes happen; increments the one global counter."""

    def on_episode_end(self, *, env_runner: Any, **kwargs: Any) -> None:
        env_runner.bus.services.get("counter").inc(1)


if __name__ == "__main__":
    backend = sys.argv[1] if len(sys.argv) > 1 else "process"
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_env_runners=2, backend=backend)
        .training(train_batch_size=1000, minibatch_size=250, num_epochs=1)
        .callbacks(CountEpisodes)
        .debugging(seed=0)
    )
    with config.build() as algo:
        algo.bus.services.provide("counter", Counter())
        episodes = sum(algo.train()["env_runners"]["num_episodes"] for _ in range(2))
        counted = algo.bus.services.get("counter").get()  # a value, on the driver
    print(f"{backend}: the global counter saw {counted} episodes; the runners reported {episodes}")
    assert counted == episodes
