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
        agents = getattr(episode, "agent_episodes", None)
        if agents is not None:  # a MultiAgentEpisode: RLlib's per-agent and per-module keys
            by_module: dict[str, float] = {}
            for agent_id, agent_episode in agents.items():
                agent_return = agent_episode.get_return()
                log(("agent_episode_returns_mean", str(agent_id)), agent_return, window=w)
                log(("agent_steps", str(agent_id)), len(agent_episode), window=w)
                module_id = agent_episode.module_id
                by_module[module_id] = by_module.get(module_id, 0.0) + agent_return
            for module_id, module_return in by_module.items():
                log(("module_episode_returns_mean", module_id), module_return, window=w)

    def on_sample_end(
        self, *, event: Any, metrics_logger: Any, samples: Any = None, **kwargs: Any
    ) -> None:
        log = metrics_logger.log_value
        steps = event.num_env_steps
        log("num_env_steps_sampled", steps, reduce="sum", clear_on_reduce=True)
        log("num_env_steps_sampled_lifetime", steps, reduce="lifetime_sum")
        for chunk in samples or ():
            agents = getattr(chunk, "agent_episodes", None)
            if agents is None:
                continue
            for agent_id, agent_chunk in agents.items():
                n, module_id = len(agent_chunk), agent_chunk.module_id
                log(
                    ("num_agent_steps_sampled", str(agent_id)),
                    n,
                    reduce="sum",
                    clear_on_reduce=True,
                )
                log(("num_agent_steps_sampled_lifetime", str(agent_id)), n, reduce="lifetime_sum")
                log(("num_module_steps_sampled", module_id), n, reduce="sum", clear_on_reduce=True)
                log(("num_module_steps_sampled_lifetime", module_id), n, reduce="lifetime_sum")
