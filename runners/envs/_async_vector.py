"""ASYNC: gymnasium's AsyncVectorEnv, each sub-env in its own process."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.async_vector_env import AsyncState
from gymnasium.vector.utils import CloudpickleWrapper

from ._env import EnvContext, MarksEnvFailures

__all__ = ("AsyncVectorEnv", "in_own_process", "without_services")


# Worker processes of ASYNC sub-envs start from a fresh interpreter, never a fork: the
# runner's process has threads (the sync facade's event loop, Ray's), and a fork copies
# whatever locks they hold. Names defined in a script are found as multiprocessing finds
# them (the script runs again as __mp_main__, so it needs its `if __name__ == "__main__"`).
_START_METHOD = "spawn"


def without_services(context: EnvContext) -> EnvContext:
    """Return ``context`` without its ``services``: they reach the Algorithm's event loop
    from the runner's process and do not pickle to a sub-env's."""
    return EnvContext(
        dict(context),
        worker_index=context.worker_index,
        num_workers=context.num_workers,
        vector_index=context.vector_index,
        in_evaluation=context.in_evaluation,
    )


def in_own_process(
    make: Callable[[], gym.Env[Any, Any]], context: EnvContext
) -> Callable[[], gym.Env[Any, Any]]:
    """Return a maker of the sub-env ``make`` makes, able to run ``foreach_env``'s code."""
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


class AsyncVectorEnv(MarksEnvFailures, gym.vector.AsyncVectorEnv):
    """An AsyncVectorEnv whose exceptions say they came from the env (``is_env_failure``)."""

    vectorize_mode = "ASYNC"

    def __init__(self, env_fns: list[Callable[[], gym.Env[Any, Any]]]) -> None:
        super().__init__(env_fns, context=_START_METHOD, autoreset_mode=AutoresetMode.NEXT_STEP)

    def __getattr__(self, name: str) -> Any:
        # Called only for a name not found. RLlib's callbacks reach sub-envs as env.envs[i],
        # which only SYNC has: say where ASYNC's are.
        if name == "envs":
            raise AttributeError(
                "'AsyncVectorEnv' object has no attribute 'envs': under "
                "gym_env_vectorize_mode='ASYNC' each sub-env lives in a process of its own; "
                "reach them with env.call(...), env.get_attr(...) or env.set_attr(...), or "
                "algo.env_runner_group.foreach_env(fn), or use 'SYNC' for env.envs[i] "
                "(docs/vectorize.md)"
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _raise_if_errors(self, successes: Iterable[bool]) -> None:
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
