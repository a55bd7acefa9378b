"""Write a run directory (params.json, result.jsonl, progress.csv, TensorBoard) and plot it.

Two short runs (two seeds) with a custom metric; the writers are observer callbacks given
to ``config.callbacks``. Then the learning curves of both, overlaid and as their mean.
Needs ``pip install "hookbus[tensorboard,plot]"``.
"""

from __future__ import annotations

import csv
import json
import tempfile
from pathlib import Path
from typing import Any

from hookbus.kernel import Callback
from hookbus.runners import PPOConfig, output_callbacks, plot_runs


class EpisodeLength(Callback):
    """A custom metric, logged where episodes end: results have env_runners/my_metric."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("my_metric", len(episode), window=20)


def train(logdir: Path, seed: int, iterations: int = 3) -> None:
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .training(train_batch_size=400, minibatch_size=100, num_epochs=2)
        .callbacks(callbacks_class=[EpisodeLength, *output_callbacks(logdir)])
        .debugging(seed=seed)
    )
    with config.build() as algo:  # on_algorithm_init: params.json
        for _ in range(iterations):
            algo.train()  # on_train_result: a line, a row, TensorBoard scalars; flushed
    # Leaving the block (algo.stop()) closed the files.


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        runs = [Path(tmp) / f"seed{seed}" for seed in (0, 1)]
        for seed, logdir in enumerate(runs):
            train(logdir, seed)
        print(f"{runs[0].name}: {', '.join(sorted(p.name for p in runs[0].iterdir()))}")

        params = json.loads((runs[0] / "params.json").read_text())
        print(f"params.json: train_batch_size {params['training']['train_batch_size']}")
        with open(runs[0] / "result.jsonl") as file:
            last = [json.loads(line) for line in file][-1]
        print(
            f"result.jsonl: iteration {last['training_iteration']}, "
            f"my_metric {last['env_runners']['my_metric']:.1f}"
        )
        with open(runs[0] / "progress.csv", newline="") as file:
            rows = list(csv.DictReader(file))
        print(f"progress.csv: {len(rows)} rows, {len(rows[0])} columns")

        curves = plot_runs(runs, output=Path(tmp) / "curves.png")
        mean = plot_runs(
            runs,
            metrics=["env_runners/episode_return_mean", "env_runners/my_metric"],
            mean=True,
            output=Path(tmp) / "mean.png",
        )
        print(f"plotted {curves.name} ({curves.stat().st_size} bytes) and {mean.name}")
        # From the shell: hookbus plot RUN_DIR [RUN_DIR ...] [--metric KEY ...] [--mean] -o FILE


if __name__ == "__main__":
    main()
