"""Envs and callbacks for the columnar-sampling tests: importable by name in worker processes.

A runner samples column by column when nobody listens to ``on_episode_step``; the classes
named ``...PerStep`` add a handler that does nothing there, which puts the runner on its
per-step loop. Everything else is the same, so the two must give the same episodes.
"""

from __future__ import annotations

import weakref
from typing import Any

import gymnasium as gym
import numpy as np

from hookbus.kernel import Callback


class InfoEnv(gym.Env[Any, Any]):
    """Episodes of random length (3 to 9 steps) whose infos vary: a counter every step,
    ``"even"`` on even steps only, ``"why"`` on the last; rewards are fractions."""

    observation_space = gym.spaces.Box(-10.0, 10.0, (3,), dtype=np.float32)
    action_space = gym.spaces.Discrete(3)

    def __init__(self, config: Any = None) -> None:
        self.t, self.length = 0, 0

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        self.t, self.length = 0, int(self.np_random.integers(3, 10))
        return self._obs(), {"reset": True}

    def step(self, action: int) -> Any:
        self.t += 1
        info: dict[str, Any] = {"t": self.t}
        if self.t % 2 == 0:
            info["even"] = self.t
        terminated = self.t >= self.length and self.length % 2 == 0
        truncated = self.t >= self.length and not terminated
        if terminated or truncated:
            info["why"] = "terminated" if terminated else "truncated"
        reward = 0.1 * (action + 1) + float(self.np_random.random())
        return self._obs(), reward, terminated, truncated, info

    def _obs(self) -> Any:
        return self.np_random.normal(size=3).astype(np.float32)


class Trace(Callback):
    """Record every episode hook with what the episode held then; rewrite rewards and use
    ``custom_data`` and temporary timestep data as callbacks do."""

    def __init__(self) -> None:
        super().__init__()
        self.trace: list[tuple[Any, ...]] = []
        self.ids: dict[str, int] = {}

    def _seen(self, hook: str, episode: Any, env_index: int, *more: Any) -> None:
        number = self.ids.setdefault(episode.id_, len(self.ids))
        self.trace.append((hook, number, env_index, len(episode), *more))

    def on_episode_created(self, *, episode: Any, env_index: int, **kwargs: Any) -> None:
        self._seen("created", episode, env_index)

    def on_episode_start(self, *, episode: Any, env_index: int, **kwargs: Any) -> None:
        episode.custom_data["first"] = float(np.sum(episode.get_observations(0)))
        episode.add_temporary_timestep_data("marks", "start")
        self._seen("start", episode, env_index, episode.custom_data["first"])

    def on_episode_end(self, *, episode: Any, env_index: int, **kwargs: Any) -> None:
        episode.add_temporary_timestep_data("marks", "end")
        self._seen(
            "end",
            episode,
            env_index,
            episode.get_return(),
            episode.is_terminated,
            episode.is_truncated,
            episode.get_temporary_timestep_data("marks"),
            _digest(episode),
        )

    def on_postprocess_trajectory(self, *, episode: Any, **kwargs: Any) -> None:
        episode.set_rewards(np.asarray(episode.get_rewards()) * 2.0)  # what the learner gets
        self._seen("postprocess", episode, episode.env_index, episode.get_return())


class TracePerStep(Trace):
    """``Trace`` with an ``on_episode_step`` handler: the runner steps per sub-env."""

    def on_episode_step(self, *, episode: Any, **kwargs: Any) -> None:
        pass


class EndMetrics(Callback):
    """Log per-episode metrics from what ``on_episode_end`` gets (the same on replay)."""

    def on_episode_end(
        self, *, event: Any, episode: Any, metrics_logger: Any, **kwargs: Any
    ) -> None:
        metrics_logger.log_value("ended", 1, reduce="sum")
        metrics_logger.log_value("terminated", float(event.terminated), window=1000)
        metrics_logger.log_value(("by_index", str(event.env_index)), 1, reduce="sum")


class EndMetricsPerStep(EndMetrics):
    """``EndMetrics`` with an ``on_episode_step`` handler (in a worker process too)."""

    def on_episode_step(self, **kwargs: Any) -> None:
        pass


def _digest(episode: Any) -> tuple[Any, ...]:
    """Return what an episode holds, as plain comparable values."""
    return (
        episode.t_started,
        np.asarray(episode.get_observations()).tobytes(),
        np.asarray(episode.get_actions()).tolist() if len(episode) else [],
        list(episode.get_rewards()) if len(episode) else [],
        episode.get_infos(),
    )


def chunk_digest(chunks: list[Any], ids: dict[str, int]) -> list[tuple[Any, ...]]:
    """Return ``sample()``'s chunks as comparable values, ids by order of first sight."""
    return [
        (
            ids.setdefault(c.id_, len(ids)),
            c.env_index,
            len(c),
            c.get_return(),
            c.is_terminated,
            c.is_truncated,
            dict(c.custom_data),
            *_digest(c),
        )
        for c in chunks
    ]


# Where a runner lives: its episode ids by order of first sight, across calls (a worker
# process may serve several runners in turn: Ray reuses them).
_IDS: weakref.WeakKeyDictionary[Any, dict[str, int]] = weakref.WeakKeyDictionary()


def sample_digest(runner: Any, n: int) -> list[tuple[Any, ...]]:
    """Sample ``n`` env steps with random actions where ``runner`` lives; return the digest."""
    ids = _IDS.setdefault(runner, {})
    return chunk_digest(runner.sample(num_timesteps=n, random_actions=True), ids)


def end_metrics(runner: Any) -> dict[str, Any]:
    """Return the metrics ``EndMetrics`` and the built-in ones logged, reduced."""
    keys = ("ended", "terminated", "by_index", "episode_return_mean", "episode_len_mean")
    return {key: runner.metrics.peek(key) for key in keys}
