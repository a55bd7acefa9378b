"""A checkpoint is data: an env it keeps as "path/to/file.py:Class" is given back to load it.

The config names its env by file and class, as `hookbus train --env` does. The checkpoint
keeps that string as data, and loading it never imports the file on the checkpoint's word:
`from_checkpoint` refuses with one line naming the value, and loads once the caller gives
the env (`env=` here; `config=` too, or `--env` on the command line).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from gymnasium.envs.classic_control import CartPoleEnv

from hookbus.kernel import ConfigError
from hookbus.runners import PPO, PPOConfig


class MyCartPole(CartPoleEnv):
    """CartPole as an env class of our own, in this file."""

    def __init__(self, env_context: Any = None) -> None:
        super().__init__()


ENV = f"{Path(__file__).resolve()}:MyCartPole"


def main() -> None:
    config = (
        PPOConfig()
        .environment(ENV)
        .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
        .debugging(seed=0)
    )
    with tempfile.TemporaryDirectory() as tmp:
        with config.build() as algo:
            algo.train()
            checkpoint = algo.save_to_path(Path(tmp) / "checkpoint")
        try:
            PPO.from_checkpoint(checkpoint)
        except ConfigError as exc:
            print(f"refused: {exc}")
        with PPO.from_checkpoint(checkpoint, env=ENV) as algo:
            env = algo.env_runner.env.envs[0].unwrapped
            print(f"loaded with env=: iteration {algo.training_iteration}, {type(env).__name__}")


if __name__ == "__main__":
    main()
