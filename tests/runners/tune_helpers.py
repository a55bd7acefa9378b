"""Envs, creators and callbacks for the register_env and Ray Tune tests.

Importable by name from worker processes and Ray actors (the tests put this folder on
``sys.path``); nothing here registers an env on import, so a worker finds a registered
env only through the creator that ships with the config.
"""

from __future__ import annotations

import os
from typing import Any

import gymnasium as gym
import numpy as np

from hookbus.kernel import Callback
from hookbus.runners import EnvContext, TaskSettableEnv


class ContextCartPole(gym.Wrapper[Any, Any, Any, Any]):
    """CartPole that reports, in every step's info, the EnvContext it was made with."""

    def __init__(self, context: EnvContext) -> None:
        super().__init__(gym.make("CartPole-v1"))
        self.seen = {
            "worker_index": context.worker_index,
            "vector_index": context.vector_index,
            "tag": context.get("tag"),
            "pid": os.getpid(),
        }

    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, terminated, truncated, {**info, **self.seen}


def make_context_cartpole(context: EnvContext) -> gym.Env[Any, Any]:
    """An env creator, as users hand to register_env: it gets the EnvContext."""
    return ContextCartPole(context)


class RecordCreation(Callback):
    """Log what the registered creator saw, from the episode's infos, per episode."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        info = episode.get_infos(-1)
        for key in ("tag", "pid", "worker_index"):
            metrics_logger.log_value(f"env_{key}", info[key], reduce=None, clear_on_reduce=True)


class EpisodeLength(Callback):
    """A custom metric, logged where RLlib's callbacks log theirs."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("custom_episode_len", len(episode), window=20)


class Counted(Callback):
    """A callback with state, which checkpoints keep (iterations seen)."""

    def __init__(self) -> None:
        super().__init__()
        self.results = 0

    def on_train_result(self, *, result: dict[str, Any], **kwargs: Any) -> None:
        self.results += 1
        result["callback_results_seen"] = self.results

    def get_state(self) -> dict[str, Any]:
        return {"results": self.results}

    def set_state(self, state: dict[str, Any]) -> None:
        self.results = state["results"]


class LevelCartPole(TaskSettableEnv):
    """CartPole with a curriculum task: the level is the number of steps an episode lasts."""

    def __init__(self, config: EnvContext | None = None) -> None:
        self.env = gym.make("CartPole-v1")
        self.observation_space = self.env.observation_space
        self.action_space = self.env.action_space
        self.level = int((config or {}).get("start_level", 1))
        self.steps = 0

    def get_task(self) -> int:
        return self.level

    def set_task(self, task: int) -> None:
        self.level = int(task)

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        self.steps = 0
        obs, info = self.env.reset(seed=seed)
        return obs, {**info, "level": self.level}

    def step(self, action: Any) -> Any:
        self.steps += 1
        obs, reward, terminated, truncated, info = self.env.step(action)
        truncated = truncated or self.steps >= 5 * self.level
        return obs, float(reward), terminated, truncated, {**info, "level": self.level}


class Curriculum(Callback):
    """RLlib's curriculum pattern: after each result, raise the level through foreach_env."""

    def on_train_result(self, *, algorithm: Any, result: dict[str, Any], **kwargs: Any) -> None:
        level = int(result["training_iteration"]) + 1
        algorithm.env_runner_group.foreach_env(lambda env: env.unwrapped.set_task(level))
        levels = algorithm.env_runner_group.foreach_env(lambda env: env.unwrapped.get_task())
        result["curriculum_level"] = float(np.min(levels))


class KillOnce:
    """An on_train_result handler that ends its process at one iteration, the first time.

    The marker file says it did, so the resumed trial trains on.
    """

    def __init__(self, marker: str, at_iteration: int) -> None:
        self.marker = marker
        self.at_iteration = at_iteration

    def __call__(self, *, result: dict[str, Any], **kwargs: Any) -> None:
        if result["training_iteration"] == self.at_iteration and not os.path.exists(self.marker):
            with open(self.marker, "w") as file:
                file.write(str(os.getpid()))
            os._exit(1)  # the trial's process dies, as on a lost node


class CrashAtTwo(Callback):
    """Raise at iteration 2, every time: a run keeps going only without this class."""

    def on_train_result(self, *, result: dict[str, Any], **kwargs: Any) -> None:
        if result["training_iteration"] == 2:
            raise RuntimeError("Intended crash at iteration 2.")


class CrashOnce:
    """An on_train_result handler that raises at one iteration, the first time (RLlib's
    ``CrashAfterNIters`` of its continue-from-checkpoint example). The marker file says it
    did, so a trial resumed from its checkpoint trains on."""

    def __init__(self, marker: str, at_iteration: int) -> None:
        self.marker = marker
        self.at_iteration = at_iteration

    def __call__(self, *, result: dict[str, Any], **kwargs: Any) -> None:
        if result["training_iteration"] == self.at_iteration and not os.path.exists(self.marker):
            with open(self.marker, "w") as file:
                file.write(str(os.getpid()))
            raise RuntimeError("Intended crash after reaching trigger iteration.")
