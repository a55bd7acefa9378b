"""Envs and callbacks for the vectorize-mode tests: importable by name in sub-env processes."""

from __future__ import annotations

import os
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.envs.classic_control.cartpole import CartPoleVectorEnv

from hookbus.kernel import Callback, Control


class Flaky(gym.Env[Any, Any]):
    """Ten-step episodes counting up; the first one made as sub-env 0 in a process raises at
    its step 3."""

    observation_space = gym.spaces.Box(0.0, 100.0, (1,), dtype=np.float32)
    action_space = gym.spaces.Discrete(2)
    made = 0

    def __init__(self, config: Any = None) -> None:
        type(self).made += 1
        self.first = type(self).made == 1 and getattr(config, "vector_index", 0) == 0
        self.t = 0

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        self.t = 0
        return np.array([0.0], dtype=np.float32), {}

    def step(self, action: int) -> Any:
        self.t += 1
        if self.first and self.t == 3:
            raise RuntimeError(f"flaky step in process {os.getpid()}")
        return np.array([self.t], dtype=np.float32), 1.0, False, self.t >= 10, {}


class FlakyVector(CartPoleVectorEnv):
    """CartPole's own vector env; the first one made in a process raises at its step 5."""

    made = 0

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        type(self).made += 1
        self.first = type(self).made == 1
        self.t = 0

    def step(self, action: Any) -> Any:
        self.t += 1
        if self.first and self.t == 5:
            raise RuntimeError("flaky vector step")
        return super().step(action)


def flaky_vector(config: dict[str, Any]) -> FlakyVector:
    """Make a FlakyVector of ``config["num_envs"]`` sub-envs (RLlib's creator form)."""
    return FlakyVector(num_envs=config["num_envs"])


def cartpole_vector(config: dict[str, Any]) -> CartPoleVectorEnv:
    """RLlib's test form: a creator taking the env config, ``num_envs`` included."""
    return CartPoleVectorEnv(**config)


class Returns(Callback):
    """Deterministic metrics per episode and the (hook, env_index, len) trace, for replay."""

    def __init__(self) -> None:
        super().__init__()
        self.trace: list[tuple[str, int, int]] = []

    def on_episode_start(self, *, episode: Any, env_index: int, **kwargs: Any) -> None:
        self.trace.append(("start", env_index, len(episode)))

    def on_episode_step(self, *, episode: Any, env_index: int, **kwargs: Any) -> None:
        self.trace.append(("step", env_index, len(episode)))

    def on_episode_end(
        self, *, episode: Any, env_index: int, metrics_logger: Any, **kwargs: Any
    ) -> None:
        self.trace.append(("end", env_index, len(episode)))
        metrics_logger.log_value("ret", episode.get_return(), window=20)
        metrics_logger.log_value("steps", len(episode), reduce="sum")
        metrics_logger.log_value("first_obs", float(np.sum(episode.get_observations()[0])))


class EndsAtFour(Callback):
    """End every episode after 4 env steps (``Control.end_episode``)."""

    def on_episode_step(self, *, episode: Any, **kwargs: Any) -> Any:
        return Control(end_episode=True) if len(episode) >= 4 else None


def pid(env: Any) -> int:
    """Return the process id where ``env`` lives."""
    return os.getpid()


def vector_index(env: Any, context: Any) -> tuple[str, int]:
    """Return the env's class name and its context's ``vector_index``."""
    return type(env).__name__, context.vector_index


def boom(env: Any) -> None:
    """Fail inside the sub-env."""
    raise ValueError(f"boom in {type(env).__name__}")


def vector_kind(runner: Any) -> tuple[str, str]:
    """Return a runner's vectorize mode setting and its vector env's gymnasium class name."""
    mro = type(runner.env.unwrapped).__mro__
    return runner.config.gym_env_vectorize_mode, next(
        c.__name__ for c in mro if c.__module__.startswith("gymnasium")
    )


def same_step_vector(config: dict[str, Any]) -> CartPoleVectorEnv:
    """A vector env that says it resets finished sub-envs in the same step."""
    env = CartPoleVectorEnv(num_envs=config["num_envs"])
    env.metadata = {**env.metadata, "autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}
    return env


def two_sub_envs(config: dict[str, Any]) -> CartPoleVectorEnv:
    """A vector env of 2 sub-envs, whatever was asked."""
    return CartPoleVectorEnv(num_envs=2)
