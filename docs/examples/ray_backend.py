"""Sample on Ray actors: on this machine, or on a Ray cluster you connect to first.

Run ``python docs/examples/ray_backend.py`` (hookbus starts a local Ray), or
``python docs/examples/ray_backend.py --address auto`` on a node where ``ray start --head``
(or ``ray start --address=...``) ran, to join that cluster. Needs ``pip install "hookbus[ray]"``.
"""

from __future__ import annotations

import argparse
import os
from collections import Counter
from typing import Any

from hookbus.kernel import Callback
from hookbus.runners import PPOConfig


class WherePerEpisode(Callback):
    """Runs in each actor: logs which process stepped the episode."""

    def on_episode_end(self, *, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("actor_pid", os.getpid(), reduce="item")


class PerSource(Callback):
    """An observer: stays in this process and receives every actor's events, in order."""

    observer = True

    def __init__(self) -> None:
        self.ends: Counter[str] = Counter()

    def on_episode_end(self, *, event: Any, **kwargs: Any) -> None:
        self.ends[event.source] += 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", help="a Ray cluster to join (ray.init(address=...))")
    args = parser.parse_args()
    if args.address:
        import ray

        ray.init(address=args.address)  # hookbus uses the Ray you initialised
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_env_runners=2, backend="ray", num_cpus_per_env_runner=1)
        .training(train_batch_size=1000, minibatch_size=250, num_epochs=1)
        .callbacks([WherePerEpisode, PerSource])
        .debugging(seed=0)
    )
    with config.build() as algo:
        result = algo.train()
        observer = algo.bus.callbacks[1]
    print(
        f"driver pid {os.getpid()}; an actor pid {result['env_runners']['actor_pid']}; "
        f"episodes per runner seen by the observer: {dict(observer.ends)}"  # type: ignore[attr-defined]
    )
