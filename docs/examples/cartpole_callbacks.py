"""Train PPO on CartPole with stateful callbacks that log custom metrics.

Also used by the README's main job: ``hookbus train ... --callbacks
docs/examples/cartpole_callbacks.py:EpisodeReturn``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookbus.kernel import Callback
from hookbus.runners import PPOConfig


class EpisodeReturn(Callback):
    """Log each episode's return (as README's EpisodeReturn does) and pole-angle spread."""

    def __init__(self) -> None:
        super().__init__()
        self.total = 0.0
        self.episodes = 0

    def on_episode_step(self, *, episode: Any, **kwargs: Any) -> None:
        # CartPole's observation is [x, x_dot, theta, theta_dot].
        episode.add_temporary_timestep_data("theta", float(episode.get_observations(-1)[2]))

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("my_return", episode.get_return(), reduce="mean", window=50)
        self.total += episode.get_return()
        self.episodes += 1
        thetas = episode.get_temporary_timestep_data("theta")  # one per step, the last too
        metrics_logger.log_value("theta_abs_max", float(np.max(np.abs(thetas))), window=50)

    def on_train_result(self, *, result: dict[str, Any], **kwargs: Any) -> None:
        result["episodes_seen_by_callback"] = self.episodes

    def get_state(self) -> dict[str, Any]:
        return {"total": self.total, "episodes": self.episodes}

    def set_state(self, state: dict[str, Any]) -> None:
        self.total, self.episodes = state["total"], state["episodes"]


if __name__ == "__main__":
    config = PPOConfig().environment("CartPole-v1").callbacks(EpisodeReturn).debugging(seed=0)
    with config.build() as algo:
        for _ in range(3):
            result = algo.train()
            print(
                f"iteration {result['training_iteration']}: "
                f"return {result['env_runners']['episode_return_mean']:.1f}, "
                f"theta_abs_max {result['env_runners']['theta_abs_max']:.3f}, "
                f"callback saw {result['episodes_seen_by_callback']} episodes"
            )
