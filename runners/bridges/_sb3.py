"""The bus inside a real Stable-Baselines3 run: a ``BaseCallback`` publishing RLlib's hooks.

SB3 calls a callback at the start and end of ``learn()``, after every vector env step and
at the end of each rollout (on-policy) or ``train_freq`` collection (off-policy), and
writes its logs with ``model.logger.dump(step)``. ``sb3_callback`` returns a callback that
turns these into hookbus's hooks with RLlib's meaning (docs/bridges.md):

- training start: ``on_environment_created`` (a new VecEnv), ``on_algorithm_init`` (a new
  model), then ``on_episode_created`` / ``on_episode_start`` per sub-env (its reset);
- each env step: per sub-env ``on_episode_step``, and for a done sub-env
  ``on_episode_end`` and its next episode's ``on_episode_created`` / ``on_episode_start``
  (``_sb3_episodes``);
- rollout end: ``on_sample_end`` with the episode chunks stepped since the last one;
- each log dump: the bridge's ``MetricsLogger`` recorded into SB3's logger, then
  ``on_train_result`` with ``result`` (what is being dumped), then what its handlers
  logged or set in ``result`` recorded too; SB3 writes it all, then the logger is reduced.

Episode hooks come from the source ``"env_runner:0"``, the algorithm's from
``"algorithm"``, as from hookbus's own runners. Importing this module imports no SB3:
``sb3_callback`` loads it on its first call.
"""

from __future__ import annotations

import functools
import importlib
import os
import weakref
from collections.abc import Iterator, Mapping
from typing import Any

from hookbus.events import AlgorithmInit, EnvironmentCreated, TrainResult
from hookbus.kernel import ConfigError, Control, Publisher, check_callbacks
from hookbus.metrics import MetricsLogger, results

from ._bus import ResultRecorder, SyncBus, check_backend
from ._rllib_data import plain_result
from ._sb3_episodes import SubEnvEpisodes

__all__ = ("sb3_callback",)

ALGORITHM_SOURCE = "algorithm"
RUNNER_SOURCE = "env_runner:0"


def sb3_callback(
    *callbacks: object,
    record: str | os.PathLike[str] | None = None,
    async_backend: str = "asyncio",
    **bus_options: Any,
) -> Any:
    """Return an SB3 ``BaseCallback`` that runs ``callbacks`` on a hookbus bus.

    Give it to SB3: ``model.learn(10_000, callback=sb3_callback(MyCallback))``.
    ``callbacks`` are hookbus ``Callback`` classes or instances, in chain order;
    ``bus_options`` the Bus's keywords (``on_error=``, ``deadline=``, callables per hook:
    ``on_episode_end=fn``). ``record`` (a path) writes a hookbus recording of the run.
    ``async_backend`` is the event loop ("asyncio" or "trio") async handlers run on. The
    bus lives as long as the callback (or until its ``close()``), over ``learn()`` calls.
    """
    base = _base_callback()
    check_backend(async_backend)
    for item in callbacks:
        cls = item if isinstance(item, type) else type(item)
        if issubclass(cls, base):
            raise ConfigError(
                f"sb3_callback() takes hookbus callbacks, and {item!r} is an SB3 "
                f"BaseCallback, which has no hooks of RLlib's to run on: give it to learn() "
                f"beside the bridge, callback=CallbackList([sb3_callback(...), "
                f"{cls.__name__}(...)]) (stable_baselines3.common.callbacks.CallbackList)"
            )
    check_callbacks(list(callbacks), **bus_options)
    path = None if record is None else os.path.abspath(os.fspath(record))
    if path is not None and not os.path.isdir(os.path.dirname(path)):
        raise ConfigError(f"record={record!r}: its folder does not exist")
    bridge = _Bridge(list(callbacks), bus_options, path, async_backend)
    return _callback_class(base)(bridge)


class _Bridge:
    """One ``sb3_callback``'s bus, episodes, metrics and hook into SB3's logger."""

    def __init__(
        self,
        callbacks: list[object],
        bus_options: Mapping[str, Any],
        record: str | None,
        backend: str,
    ) -> None:
        # The dump's TrainResult is written once SB3's values for it are final (``dump``).
        self.recorder = None if record is None else ResultRecorder(record, "sb3")
        self.bus = SyncBus(
            callbacks,
            bus_options,
            source=RUNNER_SOURCE,
            backend=backend,
            record=self.recorder,
            acts_on=("stop_training",),
        )
        self.algorithm = Publisher(self.bus.bus, ALGORITHM_SOURCE)
        self.metrics = MetricsLogger()
        self.episodes = SubEnvEpisodes(self.bus, self.metrics)
        self.iteration = 0
        """Log dumps so far: the ``training_iteration`` of ``on_train_result``."""
        self._model: Any = None
        self._env: Any = None
        self._dump: _DumpHook | None = None
        weakref.finalize(self, self.bus.close)

    # --- SB3's calls ------------------------------------------------------------------------

    def start(self, model: Any) -> None:
        """Begin a ``learn()``: announce a new env or model; begin episodes after a reset."""
        env = model.get_env()
        new_env = env is not self._env
        if new_env:
            self._env = env
            self._publish_environment(env)
        if model is not self._model:
            self._model = model
            live = {"algorithm": model, "metrics_logger": self.metrics}
            fields = {"algorithm": type(model).__name__}
            self._publish(AlgorithmInit, live, fields)
        episodes = self.episodes
        episodes.stop = False  # a stop asked in an earlier learn() ended that one
        episodes.attach(env, model.policy, model.get_vec_normalize_env())
        # learn() goes on from the last step unless it reset the env (reset_num_timesteps).
        if new_env or episodes.last_obs is None or model._last_obs is not episodes.last_obs:
            episodes.reset_all(model._last_obs)
        self._dump = _DumpHook.install(model.logger, self)

    def step(self, locals_: Mapping[str, Any]) -> bool:
        """Record an env step (SB3's ``locals``); return False once a handler asked to stop."""
        # The actions the env got: on-policy loops clip them first (``clipped_actions``);
        # off-policy ones (and sb3-contrib's MaskablePPO) step with ``actions``.
        actions = locals_.get("clipped_actions")
        if actions is None:
            actions = locals_["actions"]
        self.episodes.step(
            locals_["new_obs"], actions, locals_["rewards"], locals_["dones"], locals_["infos"]
        )
        return not self.episodes.stop

    def rollout_end(self) -> None:
        """Publish ``on_sample_end``: a rollout or ``train_freq`` collection is complete."""
        self.episodes.sample_end()

    def end(self) -> None:
        """End a ``learn()``: unhook SB3's logger, write what the recording holds."""
        if self._dump is not None:
            self._dump.uninstall()
            self._dump = None
        if self.bus.recorder is not None:
            self.bus.recorder.flush()

    def close(self) -> None:
        """Close the bus: its callbacks, the recording and the async handlers' loop."""
        self.end()
        self.bus.close()

    # --- the log dump -----------------------------------------------------------------------

    def dump(self, logger: Any, write: Any, step: int) -> None:
        """Record the metrics, publish ``on_train_result``, then let SB3 ``write`` the dump."""
        self.iteration += 1
        _record(logger, self.metrics, self.bus.bus.statistics().errors)
        dispatcher = self.bus.dispatcher(TrainResult)
        if dispatcher.call is not None:
            before = dict(logger.name_to_value)  # a handler may record into SB3's own logger
            result = dict(before)
            live = {"algorithm": self._model, "metrics_logger": self.metrics, "result": result}
            fields = {"training_iteration": self.iteration, "result": plain_result(result)}
            self._note(self.bus.run(dispatcher, TrainResult, live, fields, self.algorithm))
            # Only the keys handlers set in result: its other values are the ones recorded
            # before the chain, which would hide what the handlers logged (one dump late).
            changed = [(k, v) for k, v in result.items() if k not in before or before[k] is not v]
            # What the handlers logged, then what they set in result, in this dump.
            _record(logger, self.metrics, self.bus.bus.statistics().errors)
            excluded = logger.name_to_excluded
            for key, value in changed:
                logger.record(key, value, excluded.get(key))
            if self.recorder is not None:  # what SB3 writes now, handlers' keys included
                self.recorder.write_result(logger.name_to_value)
        write(step)
        self.metrics.reduce()  # close the period, as the Algorithm after each result

    # --- internals --------------------------------------------------------------------------

    def _publish_environment(self, env: Any) -> None:
        dispatcher = self.bus.dispatcher(EnvironmentCreated)
        if dispatcher.call is not None:
            live = {"env_runner": None, "metrics_logger": self.metrics, "env": env}
            fields = {"env_id": _env_id(env), "num_envs": int(env.num_envs)}
            self.bus.run(dispatcher, EnvironmentCreated, live, fields)

    def _publish(self, event_type: Any, live: Mapping[str, Any], fields: Any) -> None:
        dispatcher = self.bus.dispatcher(event_type)
        if dispatcher.call is not None:
            self._note(self.bus.run(dispatcher, event_type, live, fields, self.algorithm))

    def _note(self, control: Control | None) -> None:
        if control is not None and control.stop_training:
            self.episodes.stop = True


class _DumpHook:
    """SB3's ``logger.dump`` replaced, for one ``learn()``, by the bridge's ``dump``.

    Set on the logger instance (its class's method stays as it is); ``uninstall`` puts
    back what the instance had, unless someone replaced the hook meanwhile.
    """

    def __init__(self, logger: Any, bridge: _Bridge) -> None:
        self.logger = logger
        self.bridge = bridge
        self.previous = logger.__dict__.get("dump")  # an instance attribute, if any
        self.write = logger.dump

    @classmethod
    def install(cls, logger: Any, bridge: _Bridge) -> _DumpHook:
        current = logger.__dict__.get("dump")
        if isinstance(current, _DumpHook):  # a learn() that raised left it: replace it
            current.uninstall()
        hook = cls(logger, bridge)
        logger.dump = hook
        return hook

    def __call__(self, step: int = 0) -> None:
        self.bridge.dump(self.logger, self.write, step)

    def uninstall(self) -> None:
        if self.logger.__dict__.get("dump") is not self:
            return
        if self.previous is None:
            del self.logger.dump
        else:
            self.logger.dump = self.previous


def _record(logger: Any, metrics: MetricsLogger, errors: int) -> None:
    """Record ``metrics``' values into SB3's ``logger``, nested keys joined by "/"."""
    for key, value in _flat(results(metrics)):
        logger.record(key, value)
    if errors:  # handler errors under on_error="log", as hookbus's results count them
        logger.record("callbacks/errors", errors)


def _flat(tree: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from _flat(value, name + "/")
        else:
            yield name, value


def _env_id(env: Any) -> str:
    try:
        spec = env.get_attr("spec", [0])[0]
    except Exception:  # a VecEnv that cannot tell: the id is informative only
        spec = None
    env_id = getattr(spec, "id", None)
    return str(env_id) if env_id else type(getattr(env, "unwrapped", env)).__name__


def _base_callback() -> type:
    try:
        # By name, so that type checkers see SB3 (and torch, which it imports) as Any:
        # the same answer with or without the optional extra installed.
        callbacks = importlib.import_module("stable_baselines3.common.callbacks")
    except ImportError as exc:
        raise ConfigError(
            f"sb3_callback() needs Stable-Baselines3 ({exc}); install it with: "
            "pip install 'hookbus[sb3]'"
        ) from exc
    base: type = callbacks.BaseCallback
    return base


@functools.cache
def _callback_class(base: type) -> type:
    """Return the ``BaseCallback`` subclass that drives a ``_Bridge`` (made once)."""

    class HookbusCallback(base):  # type: ignore[misc]
        """SB3's callback running hookbus's bus (``sb3_callback``).

        ``bus`` is the hookbus bus (``bus.subscribe``, ``bus.statistics()``), ``metrics``
        the ``MetricsLogger`` handlers get, ``close()`` closes the bus.
        """

        def __init__(self, bridge: _Bridge) -> None:
            super().__init__(verbose=0)
            self.hookbus = bridge

        @property
        def bus(self) -> Any:
            return self.hookbus.bus.bus

        @property
        def metrics(self) -> MetricsLogger:
            return self.hookbus.metrics

        def _on_training_start(self) -> None:
            self.hookbus.start(self.model)

        def _on_step(self) -> bool:
            return self.hookbus.step(self.locals)

        def _on_rollout_end(self) -> None:
            self.hookbus.rollout_end()

        def _on_training_end(self) -> None:
            self.hookbus.end()

        def close(self) -> None:
            """Close the bus: its callbacks, the recording and the async handlers' loop."""
            self.hookbus.close()

    HookbusCallback.__qualname__ = HookbusCallback.__name__ = "HookbusCallback"
    return HookbusCallback
