"""Callbacks for the process-backend tests: importable by worker processes by name."""

from __future__ import annotations

import os
from typing import Any

import gymnasium as gym
import numpy as np

from hookbus.kernel import Callback
from hookbus.runners import TaskSettableEnv


class WorkerSide(Callback):
    """Runs in the worker processes: logs which process saw each episode."""

    def on_episode_end(self, *, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("worker_pid", os.getpid(), reduce="item")
        metrics_logger.log_value("episodes_seen", 1, reduce="sum")


class Watcher(Callback):
    """Stays on the Algorithm's bus and sees every runner's events."""

    observer = True

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.pids: set[int] = set()

    def on_episode_end(self, *, event: Any, **kwargs: Any) -> None:
        self.events.append(event)
        self.pids.add(os.getpid())

    def on_episode_step(self, *, event: Any, episode: Any, env: Any, **kwargs: Any) -> None:
        assert episode is None  # live objects of another process cannot come along
        assert env is None
        self.events.append(event)


class Explodes(Callback):
    def on_episode_end(self, **kwargs: Any) -> None:
        raise ArithmeticError("raised in a worker")


def sub_env_name(env: Any) -> str:
    return type(env).__name__


def runner_index(runner: Any) -> int:
    return int(runner.worker_index)


class Dies(Callback):
    """Ends its worker process abruptly, as a segfaulting env would."""

    def on_episode_end(self, **kwargs: Any) -> None:
        os._exit(3)


class Levels(TaskSettableEnv):
    """A one-step env whose task is a level number, echoed in every observation."""

    observation_space = gym.spaces.Box(0.0, 100.0, (1,), dtype=np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, config: dict[str, Any]) -> None:
        self.level = config.get("level", 0)

    def get_task(self) -> int:
        return self.level

    def set_task(self, task: int) -> None:
        self.level = task

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        return np.array([self.level], dtype=np.float32), {}

    def step(self, action: int) -> Any:
        return np.array([self.level], dtype=np.float32), float(self.level), True, False, {}


def next_level(train_results: dict[str, Any], env: Any, env_ctx: Any) -> int:
    assert train_results["training_iteration"] >= 1
    assert env_ctx.vector_index in (0, 1)
    return int(env.get_task()) + 1
