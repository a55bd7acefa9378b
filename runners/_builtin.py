"""The built-in EnvRunner metrics: a callback like any other, never subscribed per step."""

from __future__ import annotations

from typing import Any

from hookbus.kernel import Callback

__all__ = ("EnvRunnerMetrics",)


class EnvRunnerMetrics(Callback):
    """Log RLlib's ``env_runners/...`` metrics into each runner's logger.

    Episode returns and lengths are windowed over the last
    ``config.metrics_num_episodes_for_smoothing`` episodes of the runner's config (so
    evaluation runners may differ), and windows slide across iterations, so
    ``episode_return_mean`` stays defined in an iteration in which no episode ended.
    """

    def on_episode_end(
        self, *, episode: Any, env_runner: Any, metrics_logger: Any, **kwargs: Any
    ) -> None:
        w = env_runner.config.metrics_num_episodes_for_smoothing if env_runner else 100
        ret, length = episode.get_return(), len(episode)
        log = metrics_logger.log_value
        log("episode_return_mean", ret, reduce="mean", window=w)
        log("episode_return_min", ret, reduce="min", window=w)
        log("episode_return_max", ret, reduce="max", window=w)
        log("episode_len_mean", length, reduce="mean", window=w)
        log("episode_len_min", length, reduce="min", window=w)
        log("episode_len_max", length, reduce="max", window=w)
        log("num_episodes", 1, reduce="sum", clear_on_reduce=True)
        log("num_episodes_lifetime", 1, reduce="lifetime_sum")

    def on_sample_end(self, *, event: Any, metrics_logger: Any, **kwargs: Any) -> None:
        steps = event.num_env_steps
        metrics_logger.log_value("num_env_steps_sampled", steps, reduce="sum", clear_on_reduce=True)
        metrics_logger.log_value("num_env_steps_sampled_lifetime", steps, reduce="lifetime_sum")
