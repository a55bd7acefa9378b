"""Record a training run, inspect the file, and replay it into a callback (async and sync)."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import anyio

from hookbus.kernel import (
    Callback,
    Recorder,
    read_recording,
    read_recording_header,
    replay,
    replay_into,
)
from hookbus.metrics import MetricsLogger
from hookbus.runners import PPOConfig


class LongestEpisode(Callback):
    """A deterministic callback: what it computes live, it computes again on replay."""

    def __init__(self) -> None:
        self.longest = 0

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        self.longest = max(self.longest, len(episode))
        metrics_logger.log_value("return_mean_20", episode.get_return(), window=20)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.msgpack"
        config = (
            PPOConfig()
            .environment("CartPole-v1")
            .training(train_batch_size=1000, minibatch_size=200, num_epochs=2)
            .callbacks([Recorder(path), LongestEpisode])
            .debugging(seed=0)
        )
        with config.build() as algo:
            algo.train()
            live = algo.bus.callbacks[1]
            live_mean = algo.env_runner.metrics.peek("return_mean_20")
        # stop() closed the Recorder: the file is complete.

        header = read_recording_header(path)
        counts = Counter(type(event).__name__ for event in read_recording(path))
        print(
            f"recorded {sum(counts.values())} events by hookbus {header.hookbus_version}: "
            f"{dict(counts.most_common(3))}"
        )

        again, logger = LongestEpisode(), MetricsLogger()
        count = anyio.run(lambda: replay(path, again, metrics_logger=logger))
        print(
            f"replayed {count} events: longest episode {again.longest} "
            f"(live: {live.longest}), return_mean_20 {logger.peek('return_mean_20'):.2f} "
            f"(live: {live_mean:.2f})"
        )

        # The same from sync code, collecting what the callbacks logged.
        result = replay_into(path, LongestEpisode)
        (sync,) = result.callbacks
        assert sync.longest == again.longest
        print(
            f"replay_into: {result.events} events, longest episode {sync.longest}, "
            f"metrics {result.metrics}"
        )


if __name__ == "__main__":
    main()
