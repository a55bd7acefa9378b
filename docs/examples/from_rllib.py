"""RLlib callback code on hookbus: only the import lines differ (docs/migrating.md).

Written as an RLlib user writes it for the new API stack: a callback class with RLlib's hook
signatures, a plain function on_train_result with exactly RLlib's three arguments, custom
metrics with windows, evaluation overrides made with PPOConfig.overrides().
"""

from __future__ import annotations

import numpy as np

# RLlib: from ray.rllib.algorithms.ppo import PPOConfig
# RLlib: from ray.rllib.callbacks.callbacks import RLlibCallback
from hookbus.kernel import Callback as RLlibCallback
from hookbus.runners import PPOConfig


class PoleAngleCallback(RLlibCallback):
    def on_episode_start(self, *, episode, env_runner, metrics_logger, env, **kwargs):
        episode.custom_data["angles"] = []

    def on_episode_step(self, *, episode, env_runner, metrics_logger, env, env_index, **kwargs):
        # CartPole's observation is [x, x_dot, theta, theta_dot].
        episode.custom_data["angles"].append(abs(float(episode.get_observations(-1)[2])))

    def on_episode_end(self, *, episode, env_runner, metrics_logger, env, **kwargs):
        metrics_logger.log_value(
            "pole_angle_max", float(np.max(episode.custom_data["angles"])), window=20
        )


def on_train_result(algorithm, metrics_logger, result):
    # RLlib's docs pass functions like this one, without **kwargs.
    result["env_runners_seen"] = result["env_runners"]["num_episodes"]


if __name__ == "__main__":
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_env_runners=0)
        .training(train_batch_size=1000, minibatch_size=250, num_epochs=4)
        .callbacks(PoleAngleCallback, on_train_result=on_train_result)
        .evaluation(
            evaluation_interval=2,
            evaluation_duration=2,
            evaluation_config=PPOConfig.overrides(explore=False),
        )
        .debugging(seed=0)
    )
    algo = config.build()
    for _ in range(2):
        result = algo.train()
    algo.stop()
    print(
        f"iteration {result['training_iteration']}: "
        f"pole_angle_max {result['env_runners']['pole_angle_max']:.3f}, "
        f"episodes {result['env_runners_seen']}, "
        f"evaluation return {result['evaluation']['env_runners']['episode_return_mean']:.1f}"
    )
