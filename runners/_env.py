"""Making environments: registered ids, Env classes or creator functions, vectorised."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import gymnasium as gym

from hookbus.kernel import ConfigError

__all__ = ("EnvContext", "TaskSettableEnv", "check_env", "env_name", "make_vector_env")


class EnvContext(dict[str, Any]):
    """Give an env creator its ``env_config`` (this dict) and where the env runs (attributes).

    As RLlib's: ``worker_index`` (0 for the local runner), ``num_workers``, ``vector_index``
    (the sub-env's place in its vector env) and ``in_evaluation``.
    """

    def __init__(
        self,
        env_config: dict[str, Any] | None = None,
        *,
        worker_index: int = 0,
        num_workers: int = 0,
        vector_index: int = 0,
        in_evaluation: bool = False,
    ) -> None:
        super().__init__(env_config or {})
        self.worker_index = worker_index
        self.num_workers = num_workers
        self.vector_index = vector_index
        self.in_evaluation = in_evaluation

    def with_vector_index(self, vector_index: int) -> EnvContext:
        """Return a copy for the sub-env at ``vector_index``."""
        return EnvContext(
            dict(self),
            worker_index=self.worker_index,
            num_workers=self.num_workers,
            vector_index=vector_index,
            in_evaluation=self.in_evaluation,
        )


class TaskSettableEnv(gym.Env[Any, Any]):
    """An env with tasks (curricula): ``env_task_fn`` or callbacks call ``set_task``."""

    def get_task(self) -> Any:
        """Return the current task."""
        raise NotImplementedError

    def set_task(self, task: Any) -> None:
        """Switch to ``task`` (takes effect at the next reset at the latest)."""
        raise NotImplementedError


EnvSpec = str | type[gym.Env[Any, Any]] | Callable[..., gym.Env[Any, Any]]


def env_name(env: EnvSpec) -> str:
    """Return a readable name for an env setting: its id or its class/function name."""
    if isinstance(env, str):
        return env
    return getattr(env, "__qualname__", None) or repr(env)


def check_env(env: object) -> None:
    """Raise ConfigError unless ``env`` is a registered id, an Env class or a creator."""
    if isinstance(env, str):
        if env not in gym.registry:
            close = [name for name in gym.registry if name.lower().startswith(env.lower()[:4])]
            hint = f"; similar ids: {', '.join(sorted(close)[:5])}" if close else ""
            raise ConfigError(f"unknown env id {env!r}: not registered with gymnasium{hint}")
        return
    if not callable(env):
        raise ConfigError(
            f"env must be a registered gymnasium id, a gymnasium.Env subclass or a creator "
            f"function, got {env!r}"
        )


def make_vector_env(env: EnvSpec, num_envs: int, context: EnvContext) -> gym.vector.SyncVectorEnv:
    """Build a synchronous vector env of ``num_envs`` sub-envs (RLlib steps them in-process).

    A registered id gets ``env_config`` as keyword arguments to ``gymnasium.make``; an Env
    class or a creator function gets the sub-env's ``EnvContext``.
    """

    def creator(index: int) -> Callable[[], gym.Env[Any, Any]]:
        sub_context = context.with_vector_index(index)

        def make() -> gym.Env[Any, Any]:
            made: Any
            if isinstance(env, str):
                made = gym.make(env, **sub_context)
            elif isinstance(env, type) and _takes_argument(env):
                made = env(sub_context)
            elif isinstance(env, type):
                made = env()
            else:
                made = env(sub_context)
            if not isinstance(made, gym.Env):
                raise ConfigError(
                    f"env creator {env_name(env)} returned {made!r}, not a gymnasium.Env"
                )
            return made

        return make

    check_env(env)
    # SyncVectorEnv's default copy=True hands out a fresh observation array every step, so the
    # per-sub-env rows that episodes keep (views) are never overwritten.
    return gym.vector.SyncVectorEnv([creator(i) for i in range(num_envs)])


def _takes_argument(cls: type) -> bool:
    try:
        params = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):
        return False
    return any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
