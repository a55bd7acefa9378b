"""Vectorize modes: how a runner's sub-envs step (RLlib's ``gym_env_vectorize_mode``).

``"SYNC"`` steps the sub-envs one after the other in the runner's process (gymnasium's
SyncVectorEnv); ``"ASYNC"`` gives each sub-env its own process (AsyncVectorEnv);
``"VECTOR_ENTRY_POINT"`` uses the env's own vector implementation (``gym.make_vec(...,
vectorization_mode="vector_entry_point")``, e.g. CartPoleVectorEnv): one object, no
sub-envs to reach. All three autoreset a finished sub-env at its next step (gymnasium's
NEXT_STEP), which is what the runner's loop expects; a vector entry point declaring
another autoreset mode is refused.

Each mode's vector env class (``_env._VectorEnv``, ``_async_vector.AsyncVectorEnv``,
``_entry_point.EntryPointVectorEnv``) answers the same three questions for the runner:
``vectorize_mode`` (which it is), ``foreach_sub_env`` (run user code on each sub-env,
where the sub-env lives) and ``end_sub_episode`` (a handler ended sub-env ``i``'s
episode early: how its next one begins).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import gymnasium as gym

from hookbus.kernel import ConfigError

from .._types import EnvSpec
from ._async_vector import AsyncVectorEnv, in_own_process, without_services
from ._entry_point import EntryPointVectorEnv, entry_point_maker
from ._env import (
    AT_NEXT_STEP,
    WHEN_DONE,
    EnvContext,
    _Restarting,
    _single_agent,
    _VectorEnv,
    check_env,
    env_maker,
)

__all__ = (
    "AT_NEXT_STEP",
    "VECTORIZE_MODES",
    "WHEN_DONE",
    "foreach_sub_env",
    "make_vector_env",
    "vectorize_mode",
)

VECTORIZE_MODES = ("SYNC", "ASYNC", "VECTOR_ENTRY_POINT")
"""The values of ``env_runners(gym_env_vectorize_mode=...)``, as the config keeps them."""


def vectorize_mode(value: object) -> str:
    """Return ``value`` as one of ``VECTORIZE_MODES``; raise ConfigError if it is none.

    Takes RLlib's forms: the names in any case (``"ASYNC"``, ``"async"``) and
    ``gymnasium.VectorizeMode`` members.
    """
    if isinstance(value, gym.VectorizeMode):
        return value.name
    if isinstance(value, str) and value.upper() in VECTORIZE_MODES:
        return value.upper()
    raise ConfigError(
        f"gym_env_vectorize_mode must be one of {', '.join(map(repr, VECTORIZE_MODES))} "
        f"(any case) or a gymnasium.VectorizeMode, got {value!r}"
    )


def make_vector_env(
    env: EnvSpec,
    num_envs: int,
    context: EnvContext,
    *,
    mode: str = "SYNC",
    restart_failed_sub_environments: bool = False,
    sub_env_failures_tolerance: int = 100,
) -> gym.vector.VectorEnv[Any, Any, Any]:
    """Build the vector env of ``num_envs`` sub-envs that ``mode`` asks for.

    A registered id gets ``env_config`` as keyword arguments to ``gymnasium.make`` (or
    ``make_vec``); an Env class or a creator function gets the sub-env's ``EnvContext``,
    and under ``"VECTOR_ENTRY_POINT"`` the runner's, with ``num_envs`` added, returning
    a ``gymnasium.vector.VectorEnv`` (as RLlib calls it). Exceptions of its ``step()``
    and ``reset()`` are marked (``is_env_failure``); with
    ``restart_failed_sub_environments`` a sub-env that raises is made anew instead (the
    whole vector env under ``"VECTOR_ENTRY_POINT"``), up to
    ``sub_env_failures_tolerance`` times in a row.
    """
    mode = vectorize_mode(mode)
    check_env(env)
    if mode == "VECTOR_ENTRY_POINT":
        return EntryPointVectorEnv(
            entry_point_maker(env, num_envs, context),
            restart=restart_failed_sub_environments,
            tolerance=sub_env_failures_tolerance,
        )

    if mode == "ASYNC":
        # The services reach the Algorithm's event loop: they stay in the runner's process.
        context = without_services(context)

    def creator(index: int) -> Callable[[], gym.Env[Any, Any]]:
        make = _single_agent(env, env_maker(env, context.with_vector_index(index)))
        if restart_failed_sub_environments:
            return lambda: _Restarting(make, sub_env_failures_tolerance)
        return make

    if mode == "ASYNC":
        return AsyncVectorEnv(
            [in_own_process(creator(i), context.with_vector_index(i)) for i in range(num_envs)]
        )
    # SyncVectorEnv's default copy=True hands out a fresh observation array every step, so the
    # per-sub-env rows that episodes keep (views) are never overwritten.
    return _VectorEnv([creator(i) for i in range(num_envs)])


class SubEnvs(Protocol):
    """A vector env whose sub-envs live in this process: ``SyncVectorEnv``'s ``envs`` (the
    multi-agent runner's vector env has them too)."""

    @property
    def envs(self) -> Sequence[gym.Env[Any, Any]]:
        """The sub-envs, in order (wrapped: ``.unwrapped`` is the env itself)."""
        ...


def foreach_sub_env(
    env: AsyncVectorEnv | EntryPointVectorEnv | SubEnvs,
    fn: Callable[..., Any],
    context: EnvContext | None = None,
) -> list[Any]:
    """Call ``fn(sub_env)`` (with ``context``: ``fn(sub_env, sub_env_context)``) on every
    sub-env of ``env``, where it lives, and return the results in sub-env order.

    SYNC: the unwrapped sub-envs (``env.envs[i].unwrapped``). ASYNC: in each sub-env's
    process (``fn`` and its results must pickle; cloudpickle takes lambdas). A
    VECTOR_ENTRY_POINT env has no sub-envs: ``fn`` gets the vector env itself, once.
    """
    if isinstance(env, AsyncVectorEnv | EntryPointVectorEnv):
        return env.foreach_sub_env(fn, context)
    if context is None:
        return [fn(sub_env.unwrapped) for sub_env in env.envs]
    return [
        fn(sub_env.unwrapped, context.with_vector_index(i)) for i, sub_env in enumerate(env.envs)
    ]
