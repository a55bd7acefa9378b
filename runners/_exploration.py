"""Exploration: how an EnvRunner turns its module's outputs into the actions it takes."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any, Protocol

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from hookbus.kernel import ConfigError

from ._rl_module import ActionDistInputs, QValues, RLModule

__all__ = (
    "EXPLORATIONS",
    "EpsilonGreedy",
    "Exploration",
    "SoftQ",
    "StochasticSampling",
    "check_exploration_config",
    "make_exploration",
)

_Values = Callable[[NDArray[Any]], NDArray[Any]]
"""A module's method giving action values for observations (SoftQ's)."""


class Exploration(Protocol):
    """Choose actions for a batch of observations."""

    def get_actions(
        self,
        module: RLModule,
        obs: NDArray[Any],
        rng: np.random.Generator,
        timestep: int,
        explore: bool,
    ) -> NDArray[Any]:
        """Return one action per row of ``obs``; ``timestep`` counts the runner's env steps."""
        ...


class StochasticSampling:
    """Sample from the policy's action distribution; with ``explore=False``, act greedily.

    For the first ``random_timesteps`` env steps (of each runner) actions are uniformly
    random, as RLlib's setting of the same name does. With a DQN module the distribution is
    softmax(Q) (RLlib's Categorical over the Q-values), i.e. ``SoftQ`` at temperature 1.
    """

    def __init__(self, action_space: gym.Space[Any], *, random_timesteps: int = 0) -> None:
        if isinstance(random_timesteps, bool) or not isinstance(random_timesteps, int):
            raise ConfigError(f"random_timesteps must be an int >= 0, got {random_timesteps!r}")
        if random_timesteps < 0:
            raise ConfigError(f"random_timesteps must be an int >= 0, got {random_timesteps!r}")
        self.action_space = action_space
        self.random_timesteps = random_timesteps

    def get_actions(
        self,
        module: RLModule,
        obs: NDArray[Any],
        rng: np.random.Generator,
        timestep: int,
        explore: bool,
    ) -> NDArray[Any]:
        """Sample, act greedily, or (early on) act at random."""
        if not explore:
            return module.forward_inference(obs)
        if timestep < self.random_timesteps:
            return random_actions(self.action_space, len(obs))
        return module.forward_exploration(obs, rng)


class EpsilonGreedy:
    """Act greedily, but with probability epsilon take a uniformly random action.

    Epsilon stays at ``initial_epsilon`` for ``warmup_timesteps`` env steps, then falls
    linearly to ``final_epsilon`` over ``epsilon_timesteps`` more, and stays there (RLlib's
    schedule). ``timestep`` is the runner's own count of sampled env steps, so with several
    runners each follows the schedule on its own; RLlib counts global timesteps (with one
    runner the two coincide).

    The greedy action is ``module.forward_inference(obs)`` (argmax Q for DQN, argmax logits
    for a policy), so any module works; random actions are drawn with the runner's ``rng``
    for Discrete spaces and with ``action_space.sample()`` otherwise.
    """

    def __init__(
        self,
        action_space: gym.Space[Any],
        *,
        initial_epsilon: float = 1.0,
        final_epsilon: float = 0.05,
        epsilon_timesteps: int = 100_000,
        warmup_timesteps: int = 0,
    ) -> None:
        _check_probability("initial_epsilon", initial_epsilon)
        _check_probability("final_epsilon", final_epsilon)
        _check_count("epsilon_timesteps", epsilon_timesteps)
        _check_count("warmup_timesteps", warmup_timesteps)
        self.action_space = action_space
        self.initial_epsilon = float(initial_epsilon)
        self.final_epsilon = float(final_epsilon)
        self.epsilon_timesteps = epsilon_timesteps
        self.warmup_timesteps = warmup_timesteps
        self._discrete = _discrete(action_space)

    def epsilon(self, timestep: int) -> float:
        """Return epsilon after ``timestep`` env steps."""
        decay_steps = timestep - self.warmup_timesteps
        if decay_steps <= 0:
            return self.initial_epsilon
        if decay_steps >= self.epsilon_timesteps:
            return self.final_epsilon
        frac = decay_steps / self.epsilon_timesteps
        return self.initial_epsilon + frac * (self.final_epsilon - self.initial_epsilon)

    def get_actions(
        self,
        module: RLModule,
        obs: NDArray[Any],
        rng: np.random.Generator,
        timestep: int,
        explore: bool,
    ) -> NDArray[Any]:
        """Return greedy actions, each replaced by a random one with probability epsilon."""
        if not explore:
            return module.forward_inference(obs)
        n = len(obs)
        chose_random = rng.random(n) < self.epsilon(timestep)
        k = int(np.count_nonzero(chose_random))
        if k == n:  # e.g. while epsilon is 1: no forward pass needed
            return self._random(rng, n)
        actions = np.asarray(module.forward_inference(obs))
        if k:
            actions = actions.copy()
            actions[chose_random] = self._random(rng, k)
        return actions

    def _random(self, rng: np.random.Generator, n: int) -> NDArray[Any]:
        if self._discrete is None:
            return random_actions(self.action_space, n)
        start, count = self._discrete
        return rng.integers(start, start + count, size=n)


class SoftQ:
    """Sample actions from softmax(Q / temperature) (Boltzmann exploration), as RLlib's SoftQ.

    The values are ``module.q_values(obs)`` (DQN) or, for a policy module,
    ``module.action_dist_inputs(obs)`` (the logits). A small temperature approaches greedy
    action selection; a large one approaches uniform. With ``explore=False`` it acts
    greedily (``module.forward_inference``). Discrete action spaces only.
    """

    def __init__(self, action_space: gym.Space[Any] | None, *, temperature: float = 1.0) -> None:
        number = isinstance(temperature, int | float) and not isinstance(temperature, bool)
        if not (number and 0 < temperature < math.inf):
            raise ConfigError(f"SoftQ temperature must be a number > 0, got {temperature!r}")
        discrete = _discrete(action_space)
        if action_space is not None and discrete is None:
            raise ConfigError(
                f"SoftQ needs a Discrete action space, got {action_space!r}; "
                "use EpsilonGreedy or StochasticSampling"
            )
        self.action_space = action_space
        self.temperature = float(temperature)
        self._start = 0 if discrete is None else discrete[0]
        # The module last seen and its values method, found once (not per step).
        self._values: tuple[RLModule, _Values] | None = None

    def get_actions(
        self,
        module: RLModule,
        obs: NDArray[Any],
        rng: np.random.Generator,
        timestep: int,
        explore: bool,
    ) -> NDArray[Any]:
        """Sample from softmax(values / temperature), or act greedily without ``explore``."""
        if not explore:
            return module.forward_inference(obs)
        known = self._values
        if known is None or known[0] is not module:
            known = self._values = (module, _action_values(module))
        values = np.asarray(known[1](obs), dtype=np.float64)
        # Shift so that the best action's logit is 0: as the temperature goes to 0 the others
        # go to -inf (never inf - inf = nan), so the sample becomes the argmax.
        logits = (values - values.max(axis=1, keepdims=True)) / self.temperature
        # Gumbel-max: argmax(logits + Gumbel noise) is a sample of softmax(logits).
        logits += rng.gumbel(size=logits.shape)
        actions: NDArray[np.intp] = logits.argmax(axis=1)
        return actions + self._start if self._start else actions


def _action_values(module: RLModule) -> _Values:
    """Return the method that gives ``module``'s action values: Q-values, else logits."""
    if isinstance(module, QValues):
        return module.q_values
    if isinstance(module, ActionDistInputs):
        return module.action_dist_inputs
    raise ConfigError(
        f"SoftQ needs a module with q_values(obs) or action_dist_inputs(obs); "
        f"{type(module).__name__} has neither"
    )


def _discrete(action_space: gym.Space[Any] | None) -> tuple[int, int] | None:
    """Return (start, n) of a Discrete space, or None for any other space."""
    n = getattr(action_space, "n", None)
    if n is None or np.ndim(n) != 0:
        return None
    return int(getattr(action_space, "start", 0)), int(n)


def _check_probability(name: str, value: object) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and 0.0 <= value <= 1.0
    if not ok:  # NaN fails the comparison too
        raise ConfigError(f"{name} must be a number in [0, 1], got {value!r}")


def _check_count(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{name} must be an int >= 0, got {value!r}")


def random_actions(action_space: gym.Space[Any], n: int) -> NDArray[Any]:
    """Return ``n`` uniformly random actions of a single-env action space."""
    return np.asarray([action_space.sample() for _ in range(n)])


EXPLORATIONS: dict[str, Callable[..., Exploration]] = {
    "StochasticSampling": StochasticSampling,
    "EpsilonGreedy": EpsilonGreedy,
    "SoftQ": SoftQ,
}
"""The exploration types by name (``exploration_config={"type": name, ...}``)."""


def check_exploration_config(config: object) -> None:
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


def make_exploration(config: dict[str, Any], action_space: gym.Space[Any]) -> Exploration:
    """Build the exploration ``config`` describes for a single-env ``action_space``."""
    check_exploration_config(config)
    settings = {k: v for k, v in config.items() if k != "type"}
    return EXPLORATIONS[config["type"]](action_space, **settings)
