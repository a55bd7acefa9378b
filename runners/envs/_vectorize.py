"""Vectorize modes: how a runner's sub-envs step (RLlib's ``gym_env_vectorize_mode``).

``"SYNC"`` steps the sub-envs one after the other in the runner's process (gymnasium's
SyncVectorEnv); ``"ASYNC"`` gives each sub-env its own process (AsyncVectorEnv);
``"VECTOR_ENTRY_POINT"`` uses the env's own vector implementation (``gym.make_vec(...,
vectorization_mode="vector_entry_point")``, e.g. CartPoleVectorEnv): one object, no
sub-envs to reach. All three autoreset a finished sub-env at its next step (gymnasium's
NEXT_STEP), which is what the runner's loop expects; a vector entry point declaring
another autoreset mode is refused.

Each mode's vector env class here answers the same three questions for the runner:
``vectorize_mode`` (which it is), ``foreach_sub_env`` (run user code on each sub-env,
where the sub-env lives) and ``end_sub_episode`` (a handler ended sub-env ``i``'s
episode early: how its next one begins).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.async_vector_env import AsyncState
from gymnasium.vector.utils import CloudpickleWrapper

from hookbus.kernel import ConfigError

from ._env import (
    AT_NEXT_STEP,
    WHEN_DONE,
    EnvContext,
    EnvSpec,
    _Restarting,
    _single_agent,
    _VectorEnv,
    check_env,
    env_maker,
    env_name,
    mark_env_failure,
    resolve_env,
)

__all__ = (
    "AT_NEXT_STEP",
    "VECTORIZE_MODES",
    "WHEN_DONE",
    "foreach_sub_env",
    "make_vector_env",
    "vectorize_mode",
)

logger = logging.getLogger("hookbus")

VECTORIZE_MODES = ("SYNC", "ASYNC", "VECTOR_ENTRY_POINT")
"""The values of ``env_runners(gym_env_vectorize_mode=...)``, as the config keeps them."""

# Worker processes of ASYNC sub-envs start from a fresh interpreter, never a fork: the
# runner's process has threads (the sync facade's event loop, Ray's), and a fork copies
# whatever locks they hold. Names defined in a script are found as multiprocessing finds
# them (the script runs again as __mp_main__, so it needs its `if __name__ == "__main__"`).
_START_METHOD = "spawn"


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
        return _EntryPointVectorEnv(
            _entry_point_maker(env, num_envs, context),
            restart=restart_failed_sub_environments,
            tolerance=sub_env_failures_tolerance,
        )

    if mode == "ASYNC":
        # The services reach the Algorithm's event loop: they stay in the runner's process.
        context = _without_services(context)

    def creator(index: int) -> Callable[[], gym.Env[Any, Any]]:
        make = _single_agent(env, env_maker(env, context.with_vector_index(index)))
        if restart_failed_sub_environments:
            return lambda: _Restarting(make, sub_env_failures_tolerance)
        return make

    if mode == "ASYNC":
        return _AsyncVectorEnv(
            [_in_own_process(creator(i), context.with_vector_index(i)) for i in range(num_envs)]
        )
    # SyncVectorEnv's default copy=True hands out a fresh observation array every step, so the
    # per-sub-env rows that episodes keep (views) are never overwritten.
    return _VectorEnv([creator(i) for i in range(num_envs)])


def foreach_sub_env(
    env: Any, fn: Callable[..., Any], context: EnvContext | None = None
) -> list[Any]:
    """Call ``fn(sub_env)`` (with ``context``: ``fn(sub_env, sub_env_context)``) on every
    sub-env of ``env``, where it lives, and return the results in sub-env order.

    SYNC: the unwrapped sub-envs (``env.envs[i].unwrapped``). ASYNC: in each sub-env's
    process (``fn`` and its results must pickle; cloudpickle takes lambdas). A
    VECTOR_ENTRY_POINT env has no sub-envs: ``fn`` gets the vector env itself, once.
    """
    if isinstance(env, _AsyncVectorEnv | _EntryPointVectorEnv):
        return env.foreach_sub_env(fn, context)
    if context is None:
        return [fn(sub_env.unwrapped) for sub_env in env.envs]
    return [
        fn(sub_env.unwrapped, context.with_vector_index(i)) for i, sub_env in enumerate(env.envs)
    ]


# --- ASYNC ---------------------------------------------------------------------------------


def _without_services(context: EnvContext) -> EnvContext:
    return EnvContext(
        dict(context),
        worker_index=context.worker_index,
        num_workers=context.num_workers,
        vector_index=context.vector_index,
        in_evaluation=context.in_evaluation,
    )


def _in_own_process(
    make: Callable[[], gym.Env[Any, Any]], context: EnvContext
) -> Callable[[], gym.Env[Any, Any]]:
    return lambda: _SubEnv(make(), context)


class _SubEnv(gym.Wrapper[Any, Any, Any, Any]):
    """An ASYNC sub-env in its own process: runs the functions the runner sends it."""

    def __init__(self, env: gym.Env[Any, Any], context: EnvContext) -> None:
        super().__init__(env)
        self._context = context

    def hookbus_apply(self, wrapped: CloudpickleWrapper, with_context: bool) -> tuple[bool, Any]:
        """Return ``(True, fn(sub_env[, context]))``, or ``(False, exception)``: an
        exception raised through gymnasium's pipe would shut this worker down."""
        fn: Any = wrapped.fn  # typed as taking nothing; ours takes the sub-env
        try:
            if with_context:
                return True, fn(self.unwrapped, self._context)
            return True, fn(self.unwrapped)
        except Exception as exc:
            return False, exc


class _AsyncVectorEnv(gym.vector.AsyncVectorEnv):
    """An AsyncVectorEnv whose exceptions say they came from the env (``is_env_failure``)."""

    vectorize_mode = "ASYNC"

    def __init__(self, env_fns: list[Callable[[], gym.Env[Any, Any]]]) -> None:
        super().__init__(env_fns, context=_START_METHOD, autoreset_mode=AutoresetMode.NEXT_STEP)

    def step(self, actions: Any) -> Any:
        try:
            return super().step(actions)
        except Exception as exc:
            mark_env_failure(exc, "step()")
            raise

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        try:
            return super().reset(seed=seed, options=options)
        except Exception as exc:
            mark_env_failure(exc, "reset()")
            raise

    def _raise_if_errors(self, successes: Any) -> None:
        # gymnasium's own reports a sub-env's error through warnings.warn before it resets
        # its state (under `-W error` the warning replaces the error, and the env is left
        # "waiting"); this raises the sub-env's own exception, its traceback as a note.
        if all(successes):
            return
        errors = [self.error_queue.get() for _ in range(self.num_envs - sum(successes))]
        for index, *_ in errors:
            self.parent_pipes[index].close()
            self.parent_pipes[index] = None  # type: ignore[call-overload]  # as gymnasium does
        self._state = AsyncState.DEFAULT
        index, _, exc, trace = errors[-1]
        exc.add_note(f"hookbus: in ASYNC sub-env {index}'s process:\n{trace}")
        raise exc

    def end_sub_episode(self, i: int) -> tuple[Any, dict[str, Any]]:
        """Reset sub-env ``i`` alone, now; return the vector's observations and infos."""
        mask = np.zeros(self.num_envs, dtype=np.bool_)
        mask[i] = True
        return self.reset(options={"reset_mask": mask})  # type: ignore[no-any-return]

    def foreach_sub_env(self, fn: Callable[..., Any], context: EnvContext | None) -> list[Any]:
        """Run ``fn`` in every sub-env's process (``foreach_sub_env``)."""
        replies = self.call("hookbus_apply", CloudpickleWrapper(fn), context is not None)
        for ok, value in replies:
            if not ok:
                raise value
        return [value for _, value in replies]


# --- VECTOR_ENTRY_POINT ------------------------------------------------------------------


def _entry_point_maker(
    env: EnvSpec, num_envs: int, context: EnvContext
) -> Callable[[], gym.vector.VectorEnv[Any, Any, Any]]:
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


def _copied(obs: Any) -> Any:
    # An array for Box spaces (one C call); a dict or tuple of arrays for nested spaces.
    return obs.copy() if isinstance(obs, np.ndarray) else copy.deepcopy(obs)


class _EntryPointVectorEnv(gym.vector.VectorWrapper):
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

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
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
        return getattr(self.env, name)

    def end_sub_episode(self, i: int) -> str:
        """A vector entry point resets its sub-envs only itself: ``WHEN_DONE``."""
        return WHEN_DONE

    def foreach_sub_env(self, fn: Callable[..., Any], context: EnvContext | None) -> list[Any]:
        """Call ``fn`` once, on the vector env itself (unwrapped): it has no sub-envs."""
        if context is None:
            return [fn(self.env.unwrapped)]
        return [fn(self.env.unwrapped, context.with_vector_index(0))]
