"""Save a checkpoint per iteration into a run directory, then restore the newest complete one."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hookbus.runners import PPO, PPOConfig, list_checkpoints


def main() -> None:
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .training(train_batch_size=200, minibatch_size=100, num_epochs=1)
        .debugging(seed=0)
    )
    with tempfile.TemporaryDirectory() as logdir:
        with config.build() as algo:
            for _ in range(3):
                algo.train()
                algo.save_to_path(Path(logdir) / f"checkpoint_{algo.training_iteration:06d}")
        # What a killed save leaves is a hidden temporary folder: never listed.
        (Path(logdir) / ".checkpoint_000004.tmp-0123abcd").mkdir()
        saved = list_checkpoints(logdir)
        print("complete checkpoints:", [path.name for path in saved])
        with PPO.from_checkpoint(saved[-1]) as algo:
            print("restored iteration", algo.training_iteration)


if __name__ == "__main__":
    main()
