"""The bus inside any training loop: a gymnasium env that publishes its episodes' hooks.

``wrap_env(env, *callbacks)`` returns the env wrapped (a ``gymnasium.Wrapper``, or a
``gymnasium.vector.VectorWrapper`` for a vector env): stepping it steps ``env`` and
returns exactly what ``env`` returned (the same objects), and publishes hookbus's
EnvRunner hooks on a bus holding ``callbacks`` (docs/any_loop.md):

- at the wrapping, ``on_environment_created``;
- per sub-env episode, ``on_episode_created`` before the reset that begins it,
  ``on_episode_start`` once that reset is in it, ``on_episode_step`` per step (the final
  one included) and ``on_episode_end``, as ``_loop_episodes`` reads the env's steps.

Handlers get ``env_runner=None`` (there is none), the env given to ``wrap_env`` as
``env``, ``rl_module=None``, and the wrapper's ``metrics`` as ``metrics_logger``; the loop
takes what they logged with ``reduce_metrics()``. The episodes' events come from the
source ``"env_runner:0"``, as a local runner's. The episodes' hooks go through
``runners.episodes.EpisodePublisher``, the bus through ``SyncBus`` (an all-sync chain runs
on the caller's thread; an async one on the bridge's event loop thread).
"""

from __future__ import annotations

import os
import weakref
from typing import Any

import gymnasium as gym

from hookbus.kernel import ConfigError, check_callbacks
from hookbus.metrics import MetricsLogger, results

from ..episodes import EpisodePublisher
from ._bus import SyncBus, check_backend
from ._loop_episodes import LoopEpisodes

__all__ = ("WrappedEnv", "WrappedVectorEnv", "wrap_env")

SOURCE = "env_runner:0"


def wrap_env(
    env: Any,
    *callbacks: object,
    record: str | os.PathLike[str] | None = None,
    async_backend: str = "asyncio",
    **bus_options: Any,
) -> Any:
    """Return ``env`` wrapped so that stepping it runs ``callbacks`` on a hookbus bus.

    ``env`` is a ``gymnasium.Env`` or a ``gymnasium.vector.VectorEnv`` (any autoreset
    mode); ``callbacks`` are hookbus ``Callback`` classes or instances, in chain order;
    ``bus_options`` the Bus's keywords (``on_error=``, ``deadline=``, callables per hook:
    ``on_episode_end=fn``). ``record`` (a path; ``.jsonl`` for JSON lines) writes a hookbus
    recording, finished by ``close()``. ``async_backend`` is the event loop ("asyncio" or
    "trio") async handlers run on.
    """
    vector = isinstance(env, gym.vector.VectorEnv)
    if not vector and not isinstance(env, gym.Env):
        raise ConfigError(_not_an_env(env))
    check_backend(async_backend)
    check_callbacks(list(callbacks), **bus_options)
    path = None if record is None else os.path.abspath(os.fspath(record))
    if path is not None and not os.path.isdir(os.path.dirname(path)):
        raise ConfigError(f"record={record!r}: its folder does not exist")
    bridge = _Bridge(env, list(callbacks), bus_options, path, async_backend, vector=vector)
    wrapped = WrappedVectorEnv(env, bridge) if vector else WrappedEnv(env, bridge)
    bridge.announce()
    return wrapped


class _Bridge:
    """One wrapped env's bus, metrics and episodes."""

    def __init__(
        self,
        env: Any,
        callbacks: list[object],
        bus_options: Any,
        record: str | None,
        backend: str,
        *,
        vector: bool,
    ) -> None:
        self.env = env
        self.bus = SyncBus(
            callbacks,
            bus_options,
            source=SOURCE,
            backend=backend,
            record=record,
            producer="gymnasium",
        )
        self.metrics = MetricsLogger()
        self.hooks = EpisodePublisher(self.bus.publisher, env=env, metrics_logger=self.metrics)
        self.num_envs = int(env.num_envs) if vector else 1
        self.episodes = LoopEpisodes(self.hooks, self.bus.resolve, self.num_envs, vector=vector)
        # A wrapper dropped unclosed still finishes its recording (at garbage collection).
        self._close = weakref.finalize(self, self.bus.close)

    def announce(self) -> None:
        """Publish ``on_environment_created`` for the env just wrapped."""
        hooks = self.hooks
        if hooks.on_environment.call is not None:
            result = hooks.environment_created(env_id=_env_id(self.env), num_envs=self.num_envs)
            self.bus.resolve(hooks.on_environment, result)

    def reduce_metrics(self) -> dict[str, Any]:
        """Return what handlers logged since the last call (plain values), then reduce."""
        out = results(self.metrics)
        errors = self.bus.bus.statistics().errors
        if errors:  # handler errors under on_error="log", as hookbus's results count them
            out.setdefault("callbacks", {})["errors"] = errors
        self.metrics.reduce()
        if self.bus.recorder is not None:  # a crash later leaves every period so far
            self.bus.recorder.flush()
        return out

    def close(self) -> None:
        """Close the bus (once): its callbacks, the recording, the async handlers' loop."""
        self._close()


class _Surface:
    """What both wrappers add to the env's own API (a mix-in)."""

    _hookbus: _Bridge
    env: Any

    @property
    def bus(self) -> Any:
        """The hookbus ``Bus`` the callbacks are on (``subscribe``, ``statistics()``)."""
        return self._hookbus.bus.bus

    @property
    def metrics(self) -> MetricsLogger:
        """The ``MetricsLogger`` handlers get as ``metrics_logger``."""
        return self._hookbus.metrics

    def reduce_metrics(self) -> dict[str, Any]:
        """Return the values handlers logged, by key, and close the period (RLlib's reduce:
        a window slides on, a ``clear_on_reduce`` key starts empty, a sum counts anew);
        the recording, if any, is written up to here."""
        return self._hookbus.reduce_metrics()

    def close(self, **kwargs: Any) -> None:
        """Close the env, then the bus: its callbacks and the recording (written whole)."""
        try:
            self.env.close(**kwargs)
        finally:
            self._hookbus.close()

    def __getattr__(self, name: str) -> Any:
        # The env's own attributes, as gymnasium's wrappers forwarded them before 1.0
        # (``envs.envs``, ``envs.autoreset_mode`` that TorchRL reads); private ones not.
        if name.startswith("_"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(self.env, name)


class WrappedEnv(_Surface, gym.Wrapper):  # type: ignore[type-arg]
    """A ``gymnasium.Env`` publishing its episodes' hooks (``wrap_env``)."""

    def __init__(self, env: Any, bridge: _Bridge) -> None:
        gym.Wrapper.__init__(self, env)
        self._hookbus = bridge

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        episodes = self._hookbus.episodes
        targets = episodes.before_reset(None)
        observation, info = returned = self.env.reset(seed=seed, options=options)
        episodes.after_reset(targets, observation, info)
        return returned

    def step(self, action: Any) -> Any:
        returned = self.env.step(action)
        observation, reward, terminated, truncated, info = returned
        self._hookbus.episodes.step(action, observation, reward, terminated, truncated, info)
        return returned


class WrappedVectorEnv(_Surface, gym.vector.VectorWrapper):
    """A ``gymnasium.vector.VectorEnv`` publishing its sub-envs' episodes (``wrap_env``)."""

    def __init__(self, env: Any, bridge: _Bridge) -> None:
        gym.vector.VectorWrapper.__init__(self, env)
        self._hookbus = bridge

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> Any:
        episodes = self._hookbus.episodes
        mask = None if options is None else options.get("reset_mask")
        targets = episodes.before_reset(mask)
        observations, infos = returned = self.env.reset(seed=seed, options=options)
        episodes.after_reset(targets, observations, infos)
        return returned

    def step(self, actions: Any) -> Any:
        returned = self.env.step(actions)
        observations, rewards, terminations, truncations, infos = returned
        self._hookbus.episodes.step(
            actions, observations, rewards, terminations, truncations, infos
        )
        return returned


def _env_id(env: Any) -> str:
    spec = getattr(env, "spec", None)
    if spec is None and hasattr(env, "envs"):  # SyncVectorEnv has no spec: its sub-envs do
        spec = getattr(env.envs[0], "spec", None)
    env_id = getattr(spec, "id", None)
    return str(env_id) if env_id else type(env.unwrapped).__name__


def _not_an_env(env: object) -> str:
    kind = type(env)
    hint = ""
    if isinstance(env, type):
        hint = f"; make one first: wrap_env({env.__name__}(), ...)"
    elif kind.__module__.startswith("stable_baselines3"):
        hint = "; for an SB3 VecEnv, give sb3_callback(...) to model.learn() instead"
    return (
        f"wrap_env() takes a gymnasium.Env or gymnasium.vector.VectorEnv, not "
        f"{env!r} (a {kind.__module__}.{kind.__qualname__}){hint}"
    )
