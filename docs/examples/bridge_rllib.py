"""Run hookbus callbacks inside a real RLlib run, record it, and replay it with hookbus alone.

Needs ``pip install "hookbus[rllib]"``. Trains RLlib's PPO (torch, on the CPU) on CartPole
with one remote EnvRunner actor for two iterations; the callbacks run on a hookbus bus in
every process RLlib runs them in. ``--record PATH`` keeps the recording (this is how
``docs/examples/rllib_cartpole.msgpack``, which ``test_rllib_callback.py`` replays, was made:
``python docs/examples/bridge_rllib.py --record docs/examples/rllib_cartpole.msgpack``).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

import ray
from pole_moves import PoleMoves  # the callback, in a module that needs no RLlib
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.callbacks.callbacks import RLlibCallback

from hookbus.kernel import replay_into
from hookbus.runners.bridges import rllib_callbacks


class EpisodesSeen(RLlibCallback):
    """An RLlib callback as you already have it: it runs in the bus's chain, after PoleMoves."""

    def on_episode_end(self, *, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("episodes_seen", 1, reduce="sum")


def train(path: Path) -> list[dict[str, Any]]:
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_env_runners=1)
        .training(train_batch_size_per_learner=200, minibatch_size=100, num_epochs=1)
        .debugging(seed=0)
        .callbacks(rllib_callbacks(PoleMoves, EpisodesSeen, record=path, on_error="log"))
    )
    algo = config.build_algo()
    try:
        return [algo.train() for _ in range(2)]
    finally:
        algo.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", type=Path, help="keep the recording here")
    args = parser.parse_args()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.record or Path(tmp) / "run.msgpack"
        results = train(path)
        live = [r["env_runners"]["tilting_steps"] for r in results]
        print(f"RLlib reported tilting_steps per iteration: {live}")
        # No Ray needed from here on: the file holds every runner's events, and a replay
        # follows RLlib's reduce cycle, iteration by iteration.
        replayed = replay_into(path, [PoleMoves()])
        again = [it["env_runners"]["tilting_steps"] for it in replayed.iterations]
        print(f"replayed from {path.name}: {again}")
        assert again == live
    ray.shutdown()


if __name__ == "__main__":
    main()
