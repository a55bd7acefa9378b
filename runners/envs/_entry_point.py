"""VECTOR_ENTRY_POINT: an env's own vector implementation, one object for every sub-env."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from hookbus.kernel import ConfigError

from .._types import Batched, EnvSpec
from ._env import WHEN_DONE, EnvContext, env_name, mark_env_failure, resolve_env

__all__ = ("EntryPointVectorEnv", "entry_point_maker")

logger = logging.getLogger("hookbus")


def entry_point_maker(
    env: EnvSpec, num_envs: int, context: EnvContext
) -> Callable[[], gym.vector.VectorEnv[Any, Any, Any]]:
    """Return a maker of ``env``'s own vector env of ``num_envs`` sub-envs (checked).

    A registered id goes to ``gym.make_vec(..., vectorization_mode="vector_entry_point")``
    with ``env_config`` as keywords; a creator or class gets the runner's ``EnvContext``
    with ``num_envs`` added, as RLlib calls it.
    """
    found = resolve_env(env)
    name = env_name(env)

    def make() -> gym.vector.VectorEnv[Any, Any, Any]:
        if isinstance(found, str):
            try:
                made: Any = gym.make_vec(
                    found, num_envs=num_envs, vectorization_mode="vector_entry_point", **context
                )
            except gym.error.Error as exc:
                raise ConfigError(
                    f"env {name!r} has no vector entry point for gym_env_vectorize_mode="
                    f"'VECTOR_ENTRY_POINT' ({exc}); use 'SYNC' or 'ASYNC'"
                ) from exc
        else:
            creator: Any = found  # a creator or class returning a vector env here
            made = creator(_with_num_envs(context, num_envs))
        _check_vector_env(made, name, num_envs)
        return made  # type: ignore[no-any-return]

    return make


def _with_num_envs(context: EnvContext, num_envs: int) -> EnvContext:
    made = context.with_vector_index(0)
    made["num_envs"] = num_envs
    return made


def _check_vector_env(made: object, name: str, num_envs: int) -> None:
    if not isinstance(made, gym.vector.VectorEnv):
        raise ConfigError(
            f"env {name} made {made!r} under gym_env_vectorize_mode='VECTOR_ENTRY_POINT': its "
            f"creator must return a gymnasium.vector.VectorEnv of env_config['num_envs'] sub-envs"
        )
    if made.num_envs != num_envs:
        raise ConfigError(f"env {name} made {made.num_envs} sub-envs, not the {num_envs} asked")
    mode = made.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
    if AutoresetMode(mode) is not AutoresetMode.NEXT_STEP:
        raise ConfigError(
            f"env {name}'s vector entry point resets finished sub-envs with autoreset_mode "
            f"{mode!r}; hookbus steps VECTOR_ENTRY_POINT envs with NEXT_STEP only"
        )


def _copied(obs: Batched) -> Batched:
    # An array for Box spaces (one C call); a dict or tuple of arrays for nested spaces.
    return obs.copy() if isinstance(obs, np.ndarray) else copy.deepcopy(obs)


class EntryPointVectorEnv(gym.vector.VectorWrapper):
    """An env's own vector env: exceptions marked, observations copied, restarts whole.

    Observations are copied per step: a vector env may hand out its own buffer, and the
    episodes keep rows of them. The sub-envs are one object, so
    ``restart_failed_sub_environments`` makes the whole vector env anew (as RLlib's
    runner does): a ``step()`` that raised ends every sub-env's episode truncated (the
    last observations, reward 0, ``info["env_step_failure"]``) and the next step is the
    new env's reset, as NEXT_STEP autoreset would have it.
    """

    vectorize_mode = "VECTOR_ENTRY_POINT"

    def __init__(
        self,
        make: Callable[[], gym.vector.VectorEnv[Any, Any, Any]],
        *,
        restart: bool,
        tolerance: int,
    ) -> None:
        super().__init__(make())
        self._make, self._restart, self._tolerance = make, restart, tolerance
        self._failures_in_a_row = 0
        self._last_obs: Any = None
        self._reset_next = False  # the env was made anew: its next step is its reset

    # ``actions`` Any: gymnasium 1.2.2's VectorWrapper types it with an unbound ActType.
    def step(self, actions: Any) -> Any:
        if self._reset_next:
            self._reset_next = False
            obs, infos = self.reset()
            n = self.num_envs
            return obs, np.zeros(n), np.zeros(n, np.bool_), np.zeros(n, np.bool_), infos
        try:
            obs, rewards, terminateds, truncateds, infos = self.env.step(actions)
        except Exception as exc:
            self._recreate(exc, "step()")
            self._reset_next = True
            return self._failed_step(exc)
        self._failures_in_a_row = 0
        self._last_obs = _copied(obs)
        return self._last_obs, rewards, terminateds, truncateds, infos

    # ``seed`` Any: an int or a list of them, as the vector envs take; gymnasium's
    # VectorWrapper and VectorEnv disagree on it (1.2.2 and 1.4 differently).
    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None) -> Any:
        while True:  # until a reset works or _recreate gives up (raises)
            try:
                obs, infos = self.env.reset(seed=seed, options=options)
            except Exception as exc:
                self._recreate(exc, "reset()")
                continue
            self._last_obs = _copied(obs)
            return self._last_obs, infos

    def _failed_step(self, exc: Exception) -> Any:
        n = self.num_envs
        failure = np.array([repr(exc)] * n, dtype=object)
        infos = {"env_step_failure": failure, "_env_step_failure": np.ones(n, np.bool_)}
        return self._last_obs, np.zeros(n), np.zeros(n, np.bool_), np.ones(n, np.bool_), infos

    def _recreate(self, exc: Exception, call: str) -> None:
        mark_env_failure(exc, call)
        self._failures_in_a_row += 1
        if not self._restart or self._failures_in_a_row > self._tolerance:
            if self._restart:
                exc.add_note(
                    f"hookbus: this vector env failed {self._failures_in_a_row} times in a row, "
                    f"more than num_consecutive_env_runner_failures_tolerance="
                    f"{self._tolerance} allows under restart_failed_sub_environments"
                )
            raise exc
        logger.warning(
            "hookbus: a VECTOR_ENTRY_POINT env's %s raised %r; making it anew "
            "(restart_failed_sub_environments)",
            call,
            exc,
        )
        try:
            self.env.close()
        except Exception:  # a broken env may fail to close too; the new one matters
            pass
        self.env = self._make()

    def __getattr__(self, name: str) -> Any:
        # Callbacks read the env's own attributes through the ``env`` hook argument (RLlib
        # passes the env itself); gymnasium's VectorWrapper forwards none since 1.0.
        if name.startswith("_") or name == "env":  # not set yet (unpickling): no recursion
            raise AttributeError(name)
        try:
            return getattr(self.env, name)
        except AttributeError as exc:
            if name == "envs":  # RLlib's callbacks reach sub-envs so, under SYNC
                exc.add_note(
                    "hookbus: a VECTOR_ENTRY_POINT env steps its sub-envs as arrays and has "
                    "no sub-env objects: read its own attributes, a column per env_index "
                    "(e.g. env.state[:, env_index] for CartPole), or use "
                    "gym_env_vectorize_mode='SYNC' for env.envs[i] (docs/vectorize.md)"
                )
            raise

    def end_sub_episode(self, i: int) -> str:
        """A vector entry point resets its sub-envs only itself: ``WHEN_DONE``."""
        return WHEN_DONE

    def foreach_sub_env(self, fn: Callable[..., Any], context: EnvContext | None) -> list[Any]:
        """Call ``fn`` once, on the vector env itself (unwrapped): it has no sub-envs."""
        if context is None:
            return [fn(self.env.unwrapped)]
        return [fn(self.env.unwrapped, context.with_vector_index(0))]
