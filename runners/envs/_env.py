"""Making environments: registered ids, Env classes or creator functions, vectorised."""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import importlib.machinery
import importlib.util
import inspect
import logging
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import gymnasium as gym

from hookbus.kernel import ConfigError

from .._types import EnvSpec
from ._context import EnvContext
from ._multi_agent_env import MultiAgentEnv
from ._registry import RegisteredEnv, lookup_registered_env

__all__ = (
    "EnvContext",
    "MarksEnvFailures",
    "TaskSettableEnv",
    "check_env",
    "env_maker",
    "env_name",
    "env_names_code",
    "is_env_failure",
    "mark_env_failure",
    "resolve_env",
    "without_env_imports",
)

logger = logging.getLogger("hookbus")

# Set on exceptions that came out of the env's step() or reset(): fault tolerance treats them
# as the runner's failure, where a handler's exception propagates. An instance attribute, so
# it pickles with the exception (to the Algorithm's process).
_ENV_FAILURE = "_hookbus_env_failure"

# False inside ``without_env_imports()``: checks then look for the code an env names
# without importing it.
_IMPORT_ENVS: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "hookbus_import_envs", default=True
)


class TaskSettableEnv(gym.Env[Any, Any]):
    """An env with tasks (curricula): ``env_task_fn`` or callbacks call ``set_task``."""

    def get_task(self) -> Any:
        """Return the current task."""
        raise NotImplementedError

    def set_task(self, task: Any) -> None:
        """Switch to ``task`` (takes effect at the next reset at the latest)."""
        raise NotImplementedError


def env_name(env: EnvSpec) -> str:
    """Return a readable name for an env setting: its id or its class/function name."""
    if isinstance(env, str):
        return env
    if isinstance(env, RegisteredEnv):
        return env.name
    return getattr(env, "__qualname__", None) or repr(env)


def check_env(env: object) -> None:
    """Raise ConfigError unless ``env`` names or is an env (see ``resolve_env``).

    Inside ``without_env_imports()`` a string naming code is only looked for: the module
    must be findable, the file must exist, and neither is imported.
    """
    if isinstance(env, str) and not _IMPORT_ENVS.get():
        _find_env(env)
        return
    resolve_env(env)


@contextlib.contextmanager
def without_env_imports() -> Iterator[None]:
    """Within this block, ``check_env`` (and so ``validate()``) imports nothing an env names.

    For checks made before the code is meant to run (``hookbus tune`` checking a sweep file
    before Ray starts its trials): each ``module:Name`` or ``file.py:Name`` is looked for
    on ``sys.path`` or on disk, and the name in it is left for the run to find.
    """
    token = _IMPORT_ENVS.set(False)
    try:
        yield
    finally:
        _IMPORT_ENVS.reset(token)


def env_names_code(env: object) -> bool:
    """Tell whether resolving ``env`` may import a module: a string with a ``:`` in it
    (``module:Name``, ``path/to/file.py:Name``, gymnasium's ``module:Id``) that is not a
    name given to ``register_env``.

    Any other string resolves without importing anything: to a registered creator, to an
    id gymnasium already has (made from the entry point its registration gave), or to a
    ConfigError. Settings read from data (a checkpoint) may only hold strings for which
    this is False. Non-strings are never imported from: False.
    """
    return isinstance(env, str) and ":" in env and lookup_registered_env(env) is None


def resolve_env(env: object) -> EnvSpec:
    """Return what ``env`` names: a registered gymnasium id, an Env class or a creator.

    Strings take a name given to ``register_env`` (hookbus's, or Ray Tune's when Tune is
    imported), found first as RLlib does, which resolves to its ``RegisteredEnv``;
    gymnasium's forms and one more, as ``--callbacks`` does: a registered id
    (``"CartPole-v1"``); ``"module:id"`` (gymnasium's own: importing ``module`` registers
    ``id``), or ``"module:Attr"`` naming an Env class or creator in it; and
    ``"path/to/file.py:Attr"`` (or ``:id`` that the file registers). Each process resolves
    the string again, so a worker imports the same module or file (relative to the current
    directory). Anything else is a ConfigError naming it.

    The last three forms import code: they are for settings the user gives (a script, a
    ``--config`` file, ``--env``). A setting read from data is checked with
    ``env_names_code`` first (a checkpoint's env, ``Algorithm.from_checkpoint``).
    """
    if not isinstance(env, str):
        if not callable(env):
            raise ConfigError(
                f"env must be a registered gymnasium id, a gymnasium.Env subclass or a creator "
                f"function, got {env!r}"
            )
        return cast(EnvSpec, env)
    registered = lookup_registered_env(env)
    if registered is not None:
        return registered
    if env in gym.registry:
        return env
    source, name = _code_parts(env)
    module = _import_env_source(env, source)
    if name in gym.registry:  # the module registered it on import
        return name
    found = getattr(module, name, None)
    if found is None or not callable(found):
        raise ConfigError(
            f"env {env!r}: {source!r} neither registers a gymnasium id {name!r} nor has an "
            f"Env class or creator of that name"
        )
    return cast(EnvSpec, found)


def _code_parts(env: str) -> tuple[str, str]:
    """Split ``"source:name"``; ConfigError for a string that is no env id of any form."""
    source, colon, name = env.rpartition(":")
    if not colon or not source or not name:
        close = [known for known in gym.registry if known.lower().startswith(env.lower()[:4])]
        hint = f"; similar ids: {', '.join(sorted(close)[:5])}" if close else ""
        raise ConfigError(
            f"unknown env id {env!r}: not given to register_env() nor registered with "
            f"gymnasium{hint}; or give "
            f"'module:EnvId', 'module:EnvClass' or 'path/to/file.py:EnvClass'"
        )
    return source, name


def _find_env(env: str) -> None:
    """Raise ConfigError unless what string ``env`` names can be found, importing nothing."""
    if lookup_registered_env(env) is not None or env in gym.registry:
        return
    source, _ = _code_parts(env)
    if source.endswith(".py"):
        if not Path(source).is_file():
            raise ConfigError(f"env {env!r}: no such file {source!r}")
    elif not _module_exists(source):
        raise ConfigError(f"env {env!r}: no module {source!r} on sys.path to import")


def _module_exists(name: str) -> bool:
    """Tell whether module ``name`` can be found, without importing it or its packages.

    ``importlib.util.find_spec("a.b")`` would import ``a`` (running its ``__init__``): a
    package not imported yet is searched through its spec's locations instead.
    """
    parts = name.split(".")
    spec = None
    try:
        for i in range(len(parts)):
            prefix = ".".join(parts[: i + 1])
            if i == 0 or ".".join(parts[:i]) in sys.modules:
                spec = importlib.util.find_spec(prefix)
            elif spec is None or spec.submodule_search_locations is None:
                return False
            else:
                spec = importlib.machinery.PathFinder.find_spec(
                    prefix, list(spec.submodule_search_locations)
                )
    except (ImportError, ValueError):  # a malformed name ("a..b", ".a")
        return False
    return spec is not None


def _import_env_source(env: str, source: str) -> Any:
    if source.endswith(".py"):
        path = Path(source).resolve()
        if not path.is_file():
            raise ConfigError(f"env {env!r}: no such file {source!r}")
        if str(path.parent) not in sys.path:  # import by name, as worker processes will
            sys.path.insert(0, str(path.parent))
        source = path.stem
    try:
        return importlib.import_module(source)
    except ImportError as exc:
        raise ConfigError(f"env {env!r}: cannot import {source!r} ({exc})") from exc


def is_env_failure(exc: BaseException) -> bool:
    """Tell whether ``exc`` came out of an env's ``step()`` or ``reset()``."""
    return bool(getattr(exc, _ENV_FAILURE, False))


def mark_env_failure(exc: BaseException, call: str | None = None) -> None:
    """Mark ``exc`` as raised by an env (``call`` names the method, for a note)."""
    if is_env_failure(exc):
        return
    try:
        setattr(exc, _ENV_FAILURE, True)
    except (AttributeError, TypeError):  # an exception type without a __dict__
        return
    if call is not None:
        exc.add_note(f"hookbus: raised by the env's {call}")


AT_NEXT_STEP = "at_next_step"
"""``end_sub_episode``: the sub-env resets at its next step (its next episode starts then)."""
WHEN_DONE = "when_done"
"""``end_sub_episode``: the sub-env cannot be reset alone; it plays its episode out
unrecorded, and its next episode starts with the reset after that episode's end."""


class MarksEnvFailures(gym.vector.VectorEnv[Any, Any, Any]):
    """Give a gymnasium vector env's ``step()`` / ``reset()`` exceptions the mark that they
    came from the env (``is_env_failure``): put it before the vector env class."""

    # ``actions`` Any: gymnasium 1.2.2's vector env classes type it with an unbound ActType.
    def step(self, actions: Any) -> Any:
        try:
            return super().step(actions)
        except Exception as exc:
            mark_env_failure(exc, "step()")
            raise

    # ``seed`` stays Any: the vector envs this goes before take a seed or a list of them,
    # gymnasium's VectorEnv (what super() is to mypy) an int only.
    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None) -> Any:
        try:
            return super().reset(seed=seed, options=options)
        except Exception as exc:
            mark_env_failure(exc, "reset()")
            raise


class _VectorEnv(MarksEnvFailures, gym.vector.SyncVectorEnv):
    """A SyncVectorEnv whose exceptions say they came from the env (``is_env_failure``)."""

    vectorize_mode = "SYNC"

    def reset_next_step(self, i: int) -> None:
        """Have sub-env ``i`` reset at the next ``step()`` (its action then is ignored), as
        after a terminated or truncated step: gymnasium's NEXT_STEP autoreset."""
        self._autoreset_envs[i] = True

    def end_sub_episode(self, i: int) -> str:
        """A handler ended sub-env ``i``'s episode: it resets at its next step."""
        self.reset_next_step(i)
        return AT_NEXT_STEP


def remake_failed(
    env: Any, make: Callable[[], Any], exc: Exception, call: str, failures: int, tolerance: int
) -> Any:
    """Return a new sub-env from ``make()`` in place of ``env``, whose ``call`` raised
    ``exc``, its ``failures``-th failure in a row (``restart_failed_sub_environments``).

    Past ``tolerance`` failures in a row, raise ``exc`` instead, with a note saying so: the
    env is broken, not flaky. Single-agent and multi-agent sub-envs restart through this.
    """
    if failures > tolerance:
        exc.add_note(
            f"hookbus: this sub-env failed {failures} times in a row, more than "
            f"config.fault_tolerance(num_consecutive_env_runner_failures_tolerance="
            f"{tolerance}) allows under restart_failed_sub_environments"
        )
        raise exc
    logger.warning(
        "hookbus: a sub-env's %s raised %r; making it anew (restart_failed_sub_environments)",
        call,
        exc,
    )
    try:
        env.close()
    except Exception:  # a broken env may fail to close too; the new one matters
        pass
    return make()


class _Restarting(gym.Wrapper[Any, Any, Any, Any]):
    """Recreate a sub-env that raised, as ``restart_failed_sub_environments=True`` asks.

    RLlib's setting: the faulty sub-env is made anew without disturbing the others. A
    ``step()`` that raised ends its episode truncated (the last good observation, reward 0,
    ``info["env_step_failure"]`` naming the error), and the vector env resets the new
    sub-env at its next step. A ``reset()`` that raised is tried again on a new sub-env.
    More than ``tolerance`` failures in a row (no step succeeding in between) raise the
    last one instead: the env is broken, not flaky, and its runner fails as a whole.
    """

    def __init__(self, make: Callable[[], gym.Env[Any, Any]], tolerance: int) -> None:
        super().__init__(make())
        self._make = make
        self._last_obs: Any = None
        self._tolerance = tolerance
        self._failures_in_a_row = 0

    def _recreate(self, exc: Exception, call: str) -> None:
        self._failures_in_a_row += 1
        failures, tolerance = self._failures_in_a_row, self._tolerance
        self.env = remake_failed(self.env, self._make, exc, call, failures, tolerance)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        while True:  # until a reset works or _recreate gives up (raises)
            try:
                obs, info = self.env.reset(seed=seed, options=options)
            except Exception as exc:
                self._recreate(exc, "reset()")
                continue
            self._last_obs = obs
            return obs, info

    def step(self, action: object) -> Any:  # an object: handed to the sub-env unread
        try:
            obs, reward, terminated, truncated, info = self.env.step(action)
        except Exception as exc:
            self._recreate(exc, "step()")
            return self._last_obs, 0.0, False, True, {"env_step_failure": repr(exc)}
        self._failures_in_a_row = 0
        self._last_obs = obs
        return obs, reward, terminated, truncated, info


def _single_agent(
    env: EnvSpec, make: Callable[[], gym.Env[Any, Any]]
) -> Callable[[], gym.Env[Any, Any]]:
    def checked() -> gym.Env[Any, Any]:
        made = make()
        if isinstance(made.unwrapped, MultiAgentEnv):
            made.close()
            raise ConfigError(
                f"env {env_name(env)} made a MultiAgentEnv ({type(made.unwrapped).__name__}); "
                f"say so with config.multi_agent(policies=...) (docs/multi_agent.md)"
            )
        return made

    return checked


def env_maker(env: EnvSpec, context: EnvContext) -> Callable[[], gym.Env[Any, Any]]:
    """Return a function making one sub-env for ``context`` (its ``vector_index`` set).

    A registered id gets ``env_config`` as keyword arguments to ``gymnasium.make``; an Env
    class or a creator function gets the ``EnvContext``.
    """

    env = resolve_env(env)

    def make() -> gym.Env[Any, Any]:
        made: Any
        if isinstance(env, str):
            made = gym.make(env, **context)
        elif isinstance(env, type) and _takes_argument(env):
            made = env(context)
        elif isinstance(env, type):
            made = env()
        else:
            made = env(context)
        if not isinstance(made, gym.Env):
            raise ConfigError(f"env creator {env_name(env)} returned {made!r}, not a gymnasium.Env")
        return made

    return make


def _takes_argument(cls: type) -> bool:
    try:
        params = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):
        return False
    return any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
