"""Exploration: how an EnvRunner turns its module's outputs into the actions it takes."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from hookbus.kernel import ConfigError

__all__ = (
    "EXPLORATIONS",
    "Exploration",
    "StochasticSampling",
    "check_exploration_config",
    "make_exploration",
)


class Exploration(Protocol):
    """Choose actions for a batch of observations."""

    def get_actions(
        self, module: Any, obs: Any, rng: np.random.Generator, timestep: int, explore: bool
    ) -> Any:
        """Return one action per row of ``obs``; ``timestep`` counts the runner's env steps."""
        ...


class StochasticSampling:
    """Sample from the policy's action distribution; with ``explore=False``, act greedily.

    For the first ``random_timesteps`` env steps (of each runner) actions are uniformly
    random, as RLlib's setting of the same name does.
    """

    def __init__(self, action_space: Any, *, random_timesteps: int = 0) -> None:
        if isinstance(random_timesteps, bool) or not isinstance(random_timesteps, int):
            raise ConfigError(f"random_timesteps must be an int >= 0, got {random_timesteps!r}")
        if random_timesteps < 0:
            raise ConfigError(f"random_timesteps must be an int >= 0, got {random_timesteps!r}")
        self.action_space = action_space
        self.random_timesteps = random_timesteps

    def get_actions(
        self, module: Any, obs: Any, rng: np.random.Generator, timestep: int, explore: bool
    ) -> Any:
        """Sample, act greedily, or (early on) act at random."""
        if not explore:
            return module.forward_inference(obs)
        if timestep < self.random_timesteps:
            return random_actions(self.action_space, len(obs))
        return module.forward_exploration(obs, rng)


def random_actions(action_space: Any, n: int) -> Any:
    """Return ``n`` uniformly random actions of a single-env action space."""
    return np.asarray([action_space.sample() for _ in range(n)])


EXPLORATIONS: dict[str, Callable[..., Exploration]] = {"StochasticSampling": StochasticSampling}
"""The exploration types by name (``exploration_config={"type": name, ...}``)."""


def check_exploration_config(config: Any) -> None:
    """Raise ConfigError unless ``config`` names a known type with settings it takes."""
    if not isinstance(config, dict) or "type" not in config:
        raise ConfigError(
            f"exploration_config must be a dict with a 'type', got {config!r}; "
            f"types: {', '.join(EXPLORATIONS)}"
        )
    kind = config["type"]
    if kind not in EXPLORATIONS:
        raise ConfigError(
            f"unknown exploration type {kind!r}; known types: {', '.join(EXPLORATIONS)}"
        )
    allowed = [
        name
        for name, p in inspect.signature(EXPLORATIONS[kind]).parameters.items()
        if p.kind is p.KEYWORD_ONLY
    ]
    for name in config:
        if name != "type" and name not in allowed:
            raise ConfigError(
                f"{kind} has no setting {name!r}; allowed: {', '.join(allowed) or 'none'}"
            )


def make_exploration(config: dict[str, Any], action_space: Any) -> Exploration:
    """Build the exploration ``config`` describes for a single-env ``action_space``."""
    check_exploration_config(config)
    settings = {k: v for k, v in config.items() if k != "type"}
    return EXPLORATIONS[config["type"]](action_space, **settings)
