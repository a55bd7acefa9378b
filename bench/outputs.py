"""What the run-directory writers cost per iteration, against the iteration's own time.

Trains PPO on CartPole-v1 (with a custom metric, as users' runs have) with the writers of
``output_callbacks(logdir)`` on the bus, each wrapped in a timer of its ``on_train_result``,
and times every ``train()`` call in the same run. The iteration's own time is ``train()``'s
wall time minus the writers' time. Two batch sizes: the default (4000 env steps, a realistic
iteration) and a tiny one (200, the writers' worst case relative to the iteration). The
first iteration (files created, every CSV column new) is reported apart from the median.
Run: ``python bench/outputs.py [--iterations N]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from typing import Any

from hookbus.kernel import Callback
from hookbus.runners import PPOConfig, output_callbacks


class EpisodeLength(Callback):
    """A custom metric logged on the EnvRunner side (results get env_runners/my_metric)."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("my_metric", len(episode), window=20)


class Timed(Callback):
    """Time a writer's ``on_train_result`` where it runs: on the Algorithm's bus."""

    observer = True

    def __init__(self, writer: Callback) -> None:
        self.writer = writer
        self.seconds: list[float] = []

    def on_algorithm_init(self, **kwargs: Any) -> None:
        self.writer.on_algorithm_init(**kwargs)

    def on_train_result(self, **kwargs: Any) -> None:
        start = time.perf_counter()
        self.writer.on_train_result(**kwargs)
        self.seconds.append(time.perf_counter() - start)

    def close(self) -> None:
        self.writer.close()


def measure(batch: int, iterations: int) -> None:
    with tempfile.TemporaryDirectory() as logdir:
        timed = [Timed(writer) for writer in output_callbacks(logdir, tensorboard=True)]
        config = (
            PPOConfig()
            .environment("CartPole-v1")
            .training(train_batch_size=batch, minibatch_size=min(128, batch))
            .callbacks(callbacks_class=[EpisodeLength, *timed])
            .debugging(seed=0)
        )
        walls = []
        with config.build() as algo:
            for _ in range(iterations):
                start = time.perf_counter()
                result = algo.train()
                walls.append(time.perf_counter() - start)
    writers = [sum(t.seconds[i] for t in timed) for i in range(iterations)]
    own = [wall - w for wall, w in zip(walls, writers, strict=True)]
    keys = sum(1 for _ in _leaves(result))
    print(f"\ntrain_batch_size={batch}: {iterations} iterations, {keys} result keys")
    print(f"{'':<24}{'first':>10}{'median':>10}")
    for t in timed:
        _row(type(t.writer).__name__, t.seconds)
    _row("all writers", writers)
    _row("iteration (own time)", own)
    # The first iteration creates the files: its ratio is the one-off, the median the rule.
    ratios = [w / o for w, o in zip(writers, own, strict=True)]
    rest = statistics.median(ratios[1:]) if iterations > 1 else ratios[0]
    print(
        f"writer time / iteration time: {rest:.2%} (median after the first; first {ratios[0]:.2%})"
    )


def _row(name: str, seconds: list[float]) -> None:
    first, median = seconds[0] * 1e3, statistics.median(seconds[1:] or seconds) * 1e3
    print(f"{name:<24}{first:>8.2f}ms{median:>8.2f}ms")


def _leaves(tree: dict[str, Any]) -> Any:
    for value in tree.values():
        if isinstance(value, dict):
            yield from _leaves(value)
        else:
            yield value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=10)
    args = parser.parse_args()
    for batch in (4000, 200):
        measure(batch, args.iterations)


if __name__ == "__main__":
    main()
