"""Ray Tune: a grid over lr with PPO as the trainable, a custom metric, the best checkpoint.

Needs ``pip install "hookbus[tune]"``. Run: ``python docs/examples/tune_sweep.py``.
"""

from __future__ import annotations

import tempfile
from typing import Any

import gymnasium as gym
import ray
from ray import tune

from hookbus.kernel import Callback
from hookbus.runners import PPO, PPOConfig, register_env


def make_cartpole(env_context: Any) -> gym.Env[Any, Any]:
    """An env creator, as RLlib's: it gets the EnvContext (env_config, worker_index, ...)."""
    return gym.make("CartPole-v1", max_episode_steps=env_context.get("max_steps", 500))


class EpisodeLength(Callback):
    """A custom metric: it shows up in every trial's results and in Tune's files."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("my_episode_len", len(episode), window=20)


if __name__ == "__main__":
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    register_env("short_cartpole", make_cartpole)
    config = (
        PPOConfig()
        .environment("short_cartpole", env_config={"max_steps": 200})
        .training(
            lr=tune.grid_search([1e-3, 3e-4]),  # one trial per value
            train_batch_size=500,
            minibatch_size=100,
            num_epochs=4,
        )
        .callbacks(EpisodeLength)
    )
    tuner = tune.Tuner(
        config.algo_class,  # PPO, a Tune Trainable
        param_space=config,  # the config itself
        run_config=tune.RunConfig(
            storage_path=tempfile.mkdtemp(prefix="hookbus-tune-"),
            stop={"training_iteration": 4},
            checkpoint_config=tune.CheckpointConfig(checkpoint_at_end=True),
            verbose=0,
        ),
    )
    results = tuner.fit()
    best = results.get_best_result(metric="env_runners/episode_return_mean", mode="max")
    for result in results:
        runners = result.metrics["env_runners"]
        print(
            f"lr={result.config['lr']:g}: return "
            f"{runners['episode_return_mean']:.1f}, my_episode_len {runners['my_episode_len']:.1f}"
        )
    # The checkpoint is hookbus's; the config holds code (a callback), so pass it back.
    restored_config = PPO.get_default_config().update_from_dict(best.config)
    with PPO.from_checkpoint(best.checkpoint, config=restored_config) as algo:
        print(f"best lr={algo.config.lr:g}, restored at iteration {algo.training_iteration}")
    ray.shutdown()
