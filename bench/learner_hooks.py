"""Cost of the learner hooks: a training iteration with and without a subscriber to them.

The subscriber is trivial (one sync handler on each hook), so what is measured is the hooks'
own cost: building two events (the end one with a float copy of the stats), two dispatches
on the event loop, and for DQN one thread hop per update instead of one per sampling round.
Each case alternates the two setups on the same seed and keeps the best iteration time of
each (noise on a shared machine only adds time). Run: ``python bench/learner_hooks.py
[--quick]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).parent))
from _timing import best_ns_async

from hookbus.events import LearnerUpdateEnd, LearnerUpdateStart
from hookbus.kernel import Bus, Publisher
from hookbus.runners import AlgorithmConfig, DQNConfig, PPOConfig

# PPO's stats: a dozen floats, copied into the end event.
STATS = {f"stat_{i}": float(i) for i in range(12)}


def handler(**kwargs: Any) -> None:
    """Do nothing: the cost measured is the hooks'."""


def best_iteration_s(config: AlgorithmConfig[Any], iterations: int, subscribed: bool) -> float:
    if subscribed:
        config = config.copy().callbacks(
            on_learner_update_start=[handler], on_learner_update_end=[handler]
        )
    best = float("inf")
    with config.build() as algo:
        algo.train()  # warm up
        for _ in range(iterations):
            start = time.perf_counter()
            algo.train()
            best = min(best, time.perf_counter() - start)
    return best


async def per_update_ns(subscribed: bool, n: int) -> float:
    """Return the ns the two publishes add to one update (the thread hop excluded)."""
    bus = Bus()
    if subscribed:
        bus.subscribe(LearnerUpdateStart, handler)
        bus.subscribe(LearnerUpdateEnd, handler)
    publisher = Publisher(bus, "algorithm", algorithm=None, metrics_logger=None)
    live = {"learner": None, "module": None, "batch": None}

    async def loop(k: int) -> None:
        for _ in range(k):
            # As Algorithm.update_learner does, guard included.
            if publisher.wants(LearnerUpdateStart) or publisher.wants(LearnerUpdateEnd):
                fields = {"training_iteration": 1, "batch_size": 200, "update_index": 0}
                await publisher.publish(LearnerUpdateStart, live, **fields)
                plain = {key: float(value) for key, value in STATS.items()}
                await publisher.publish(LearnerUpdateEnd, live, stats=plain, **fields)

    return await best_ns_async(loop, n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations")
    args = parser.parse_args()
    iterations = 3 if args.quick else 8
    cases = {
        "PPO tiny (200 steps, 1 epoch)": PPOConfig()
        .environment("CartPole-v1")
        .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
        .debugging(seed=0),
        "PPO default (CartPole settings)": PPOConfig().environment("CartPole-v1").debugging(seed=0),
        "DQN default (1000 steps, 250 updates)": DQNConfig()
        .environment("CartPole-v1")
        .training(num_steps_sampled_before_learning_starts=0)
        .debugging(seed=0),
    }
    n = 2_000 if args.quick else 20_000
    off, on = (anyio.run(per_update_ns, sub, n) for sub in (False, True))
    print(f"per update, the hooks alone: {off:.0f} ns unsubscribed, {on / 1e3:.1f} us subscribed")
    print(f"{'case':<40} {'no subscriber':>14} {'subscribed':>12} {'ratio':>7}")
    for name, config in cases.items():
        times = {False: float("inf"), True: float("inf")}
        for _ in range(2):  # alternate, so drift hits both alike
            for subscribed in (False, True):
                t = best_iteration_s(config, iterations, subscribed)
                times[subscribed] = min(times[subscribed], t)
        off, on = times[False] * 1e3, times[True] * 1e3
        print(f"{name:<40} {off:>11.1f} ms {on:>9.1f} ms {on / off:>6.3f}x")


if __name__ == "__main__":
    main()
