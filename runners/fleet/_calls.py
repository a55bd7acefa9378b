"""What ``foreach_env_runner`` takes, as RLlib takes it: one function per runner, checked."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from hookbus.kernel import ConfigError

__all__ = ("RunnerFunction", "check_unsupported", "per_runner")

RunnerFunction: TypeAlias = Callable[..., Any] | str | Sequence[Callable[..., Any] | str]
"""A function of the runner, a method name, or a list of them (one per remote runner)."""


def per_runner(
    func: RunnerFunction, kwargs: dict[str, Any] | None, remote: int, *, local: bool
) -> list[Callable[[Any], Any]]:
    """Return one ``fn(env_runner)`` per target: the local runner (if ``local``), then the
    ``remote`` remote runners. ``kwargs`` go to every call, as RLlib's remote calls get them.

    A method name calls that method (RLlib's ``func="get_metrics"``); a list gives each
    remote runner its own function, as RLlib's actor manager does, so it must have one per
    remote runner and the local runner must be left out.
    """
    extra = dict(kwargs or {})
    if isinstance(func, str) or not isinstance(func, Sequence):
        return [_bind(func, extra)] * (remote + int(local))
    functions = list(func)
    if local:
        raise ConfigError(
            "foreach_env_runner(func=[...]) gives one function per remote runner; the local "
            "runner has none: pass local_env_runner=False"
        )
    if len(functions) != remote:
        raise ConfigError(
            f"foreach_env_runner(func=[...]) got {len(functions)} functions for {remote} "
            f"remote runners; give one per runner (remote_worker_ids= picks the runners)"
        )
    return [_bind(f, extra) for f in functions]


def _bind(func: object, kwargs: dict[str, Any]) -> Callable[[Any], Any]:
    if isinstance(func, str):
        return operator.methodcaller(func, **kwargs)
    if not callable(func):
        raise ConfigError(
            f"foreach_env_runner(func={func!r}): expected a function of the runner, a method "
            f"name or a list of them"
        )
    return functools.partial(func, **kwargs) if kwargs else func


def check_unsupported(
    return_obj_refs: bool, mark_healthy: bool, healthy_only: bool, timeout_seconds: float | None
) -> None:
    """Refuse RLlib's options that have no meaning here, each with one error saying why."""
    if return_obj_refs:
        raise ConfigError(
            "foreach_env_runner(return_obj_refs=True): hookbus returns the results "
            "themselves, on every backend (Ray's ObjectRefs stay inside the Ray backend); "
            "leave return_obj_refs=False"
        )
    if mark_healthy and not healthy_only:
        raise ConfigError(
            "foreach_env_runner(mark_healthy=True, healthy_only=False): a failed runner "
            "comes back only by a restart; call algo.restore_env_runners(group) instead"
        )
    if timeout_seconds is not None and timeout_seconds <= 0:
        raise ConfigError(
            f"foreach_env_runner(timeout_seconds={timeout_seconds!r}): RLlib's "
            f"fire-and-forget (0.0) is not supported; give None (wait) or seconds > 0"
        )
