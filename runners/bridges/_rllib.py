"""The bus inside a real RLlib run: an ``RLlibCallback`` class that publishes every hook call.

RLlib instantiates its callbacks class once in the Algorithm (on the driver) and once in
every EnvRunner (the local one and each remote actor). Each instance of the class made here
builds, on its first hook call, a bus of its own in its own process, holding the callbacks
given to ``rllib_callbacks``, and publishes every later call on it as hookbus's event, with
RLlib's live objects as the live arguments.

Recording: the driver's instance writes the file. A runner's instance keeps its events
(a ``Collector``) until the driver takes them, at each ``on_train_result`` and
``on_evaluate_end``, through RLlib's ``foreach_env_runner``: one file, every runner a
source, in order per source.
"""

from __future__ import annotations

import functools
import itertools
import os
import threading
import weakref
from collections.abc import Mapping
from typing import Any

from hookbus.events import (
    AlgorithmInit,
    BaseEvent,
    CheckpointLoaded,
    EnvironmentCreated,
    EnvRunnersRecreated,
    EpisodeCreated,
    EpisodeEnd,
    EpisodeStart,
    EpisodeStep,
    EvaluateEnd,
    EvaluateOfflineEnd,
    EvaluateOfflineStart,
    EvaluateStart,
    OfflineEvalRunnersRecreated,
    SampleEnd,
    TrainResult,
)
from hookbus.kernel import ConfigError, check_callbacks

from ._bus import ForeignCallback, SyncBus, adapt, check_backend, foreign_hooks
from ._rllib_data import (
    environment_fields,
    plain_result,
    reset_fields,
    sample_fields,
    step_fields,
)

__all__ = ("rllib_callbacks",)

ALGORITHM_SOURCE = "algorithm"

_ids = itertools.count()


def rllib_callbacks(
    *callbacks: object,
    record: str | os.PathLike[str] | None = None,
    async_backend: str = "asyncio",
    **bus_options: Any,
) -> type:
    """Return an ``RLlibCallback`` class that runs ``callbacks`` on a hookbus bus.

    Give the class to RLlib: ``config.callbacks(rllib_callbacks(MyCallback))``.
    ``callbacks`` are hookbus ``Callback`` classes or instances, RLlib ``RLlibCallback``
    subclasses (or instances) as you have them, in chain order; ``bus_options`` are the
    Bus's keywords (``on_error=``, ``deadline=``, callables per hook: ``on_episode_end=fn``).
    ``record`` (a path) writes one hookbus recording of the whole run, on the driver.
    ``async_backend`` is the event loop ("asyncio" or "trio") async handlers run on.
    """
    base = _rllib_callback_base()
    check_backend(async_backend)
    items = [_wrap_spec(c, base) for c in callbacks]
    check_callbacks([i for i in items if not isinstance(i, _RLlibSpec)], **bus_options)
    path = None if record is None else os.path.abspath(os.fspath(record))
    if path is not None and not os.path.isdir(os.path.dirname(path)):
        raise ConfigError(f"record={record!r}: its folder does not exist")
    spec = _Spec(f"{os.getpid()}-{next(_ids)}", items, dict(bus_options), path, async_backend)

    class HookbusCallbacks(base):  # type: ignore[misc, valid-type]
        """RLlib's callbacks class running hookbus's bus (``rllib_callbacks``)."""

        hookbus_spec = spec

        def __init__(self) -> None:
            super().__init__()
            self.hookbus: _Bridge | None = None
            """This instance's bus and its role (driver or runner), once called."""

        # --- the Algorithm's hooks (the driver) -----------------------------------------

        def on_algorithm_init(
            self, *, algorithm: Any, metrics_logger: Any = None, **kw: Any
        ) -> None:
            bridge = self._driver()
            live = {"algorithm": algorithm, "metrics_logger": metrics_logger}
            bridge.publish(AlgorithmInit, live, algorithm=type(algorithm).__name__)

        def on_train_result(
            self, *, algorithm: Any, metrics_logger: Any = None, result: Any = None, **kw: Any
        ) -> None:
            bridge = self._driver()
            bridge.take_events(getattr(algorithm, "env_runner_group", None))
            live = {"algorithm": algorithm, "metrics_logger": metrics_logger, "result": result}
            if bridge.listens(TrainResult):  # else no copy of the result is made
                iteration = _iteration(algorithm, result)
                data = plain_result(result)
                bridge.publish(TrainResult, live, training_iteration=iteration, result=data)

        def on_evaluate_start(
            self, *, algorithm: Any, metrics_logger: Any = None, **kw: Any
        ) -> None:
            live = {"algorithm": algorithm, "metrics_logger": metrics_logger}
            iteration = _iteration(algorithm, None)
            self._driver().publish(EvaluateStart, live, training_iteration=iteration)

        def on_evaluate_end(
            self,
            *,
            algorithm: Any,
            metrics_logger: Any = None,
            evaluation_metrics: Any = None,
            **kw: Any,
        ) -> None:
            bridge = self._driver()
            bridge.take_events(getattr(algorithm, "eval_env_runner_group", None))
            bridge.publish_evaluation(EvaluateEnd, algorithm, metrics_logger, evaluation_metrics)

        def on_evaluate_offline_start(
            self, *, algorithm: Any, metrics_logger: Any = None, **kw: Any
        ) -> None:
            live = {"algorithm": algorithm, "metrics_logger": metrics_logger}
            iteration = _iteration(algorithm, None)
            self._driver().publish(EvaluateOfflineStart, live, training_iteration=iteration)

        def on_evaluate_offline_end(
            self,
            *,
            algorithm: Any,
            metrics_logger: Any = None,
            evaluation_metrics: Any = None,
            **kw: Any,
        ) -> None:
            self._driver().publish_evaluation(
                EvaluateOfflineEnd, algorithm, metrics_logger, evaluation_metrics
            )

        def on_offline_eval_runners_recreated(self, *, algorithm: Any, **kw: Any) -> None:
            # RLlib's base class names these offline_eval_runner_group/_indices; its
            # Algorithm passes env_runner_group/env_runner_indices (2.60): either arrives.
            group = kw.get("env_runner_group", kw.get("offline_eval_runner_group"))
            indices = kw.get("env_runner_indices", kw.get("offline_eval_runner_indices")) or []
            live = {
                "algorithm": algorithm,
                "env_runner_group": group,
                "env_runner_indices": indices,
            }
            fields = {"env_runner_indices": [int(i) for i in indices]}
            self._driver().publish(OfflineEvalRunnersRecreated, live, **fields)

        def on_checkpoint_loaded(self, *, algorithm: Any, **kw: Any) -> None:
            live = {"algorithm": algorithm, "metrics_logger": getattr(algorithm, "metrics", None)}
            self._driver().publish(CheckpointLoaded, live)

        def on_env_runners_recreated(
            self,
            *,
            algorithm: Any,
            env_runner_group: Any,
            env_runner_indices: Any,
            is_evaluation: bool,
            **kw: Any,
        ) -> None:
            live = {
                "algorithm": algorithm,
                "env_runner_group": env_runner_group,
                "env_runner_indices": env_runner_indices,
                "is_evaluation": is_evaluation,
            }
            fields = {
                "env_runner_indices": [int(i) for i in env_runner_indices],
                "is_evaluation": bool(is_evaluation),
            }
            self._driver().publish(EnvRunnersRecreated, live, **fields)

        # --- an EnvRunner's hooks -------------------------------------------------------

        def on_environment_created(
            self, *, env_runner: Any, metrics_logger: Any = None, env: Any = None, **kw: Any
        ) -> None:
            env_context = kw.get("env_context")
            live = {
                "env_runner": env_runner,
                "metrics_logger": metrics_logger,
                "env": env,
                "env_context": env_context,
            }
            bus = self._runner(env_runner).bus
            dispatcher = bus.dispatcher(EnvironmentCreated)
            if dispatcher.call is not None:
                fields = environment_fields(env_runner, env_context)
                bus.run(dispatcher, EnvironmentCreated, live, fields)

        def on_episode_created(self, *, episode: Any, **kw: Any) -> None:
            bridge = self.hookbus or self._runner(kw["env_runner"])
            dispatcher = bridge.created
            if dispatcher.call is not None:
                fields = {
                    "episode_id": episode.id_,
                    "env_index": kw.get("env_index") or 0,
                    "multi_agent": bridge.is_multi_agent(episode),
                }
                bridge.bus.run(dispatcher, EpisodeCreated, _episode_live(episode, kw), fields)

        def on_episode_start(self, *, episode: Any, **kw: Any) -> None:
            bridge = self.hookbus or self._runner(kw["env_runner"])
            dispatcher = bridge.started
            if dispatcher.call is not None:
                fields = reset_fields(episode, bridge.is_multi_agent(episode))
                fields["env_index"] = kw.get("env_index") or 0
                bridge.bus.run(dispatcher, EpisodeStart, _episode_live(episode, kw), fields)

        def on_episode_step(self, *, episode: Any, **kw: Any) -> None:
            bridge = self.hookbus or self._runner(kw["env_runner"])
            dispatcher = bridge.stepped
            if dispatcher.call is not None:
                fields = step_fields(episode, bridge.is_multi_agent(episode))
                fields["env_index"] = kw.get("env_index") or 0
                bridge.bus.run(dispatcher, EpisodeStep, _episode_live(episode, kw), fields)

        def on_episode_end(self, *, episode: Any, **kw: Any) -> None:
            bridge = self.hookbus or self._runner(kw["env_runner"])
            dispatcher = bridge.ended
            if dispatcher.call is not None:
                fields = {
                    "episode_id": episode.id_,
                    "env_index": kw.get("env_index") or 0,
                    "terminated": bool(episode.is_terminated),
                    "truncated": bool(episode.is_truncated),
                }
                bridge.extra["prev_episode_chunks"] = kw.get("prev_episode_chunks")
                try:
                    bridge.bus.run(dispatcher, EpisodeEnd, _episode_live(episode, kw), fields)
                finally:
                    bridge.extra.clear()

        def on_sample_end(
            self, *, env_runner: Any, metrics_logger: Any = None, samples: Any = None, **kw: Any
        ) -> None:
            bridge = self.hookbus or self._runner(env_runner)
            live = {"env_runner": env_runner, "metrics_logger": metrics_logger, "samples": samples}
            dispatcher = bridge.bus.dispatcher(SampleEnd)
            if dispatcher.call is not None:
                bridge.bus.run(dispatcher, SampleEnd, live, sample_fields(samples))

        # --- internals ------------------------------------------------------------------

        def _driver(self) -> _Bridge:
            bridge = self.hookbus
            if bridge is None:
                bridge = self.hookbus = _Bridge(spec, base, ALGORITHM_SOURCE, driver=True)
            return bridge

        def _runner(self, env_runner: Any) -> _Bridge:
            bridge = self.hookbus
            if bridge is None:
                bridge = self.hookbus = _Bridge(spec, base, _source(env_runner), driver=False)
                bridge.attach(env_runner)
            return bridge

    HookbusCallbacks.__qualname__ = HookbusCallbacks.__name__ = "HookbusCallbacks"
    return HookbusCallbacks


class _Spec:
    """What every instance of one bridge class builds its bus from (sent to the actors)."""

    def __init__(
        self,
        key: str,
        items: list[object],
        bus_options: dict[str, Any],
        record: str | None,
        backend: str,
    ) -> None:
        self.key = key
        self.items = items
        self.bus_options = bus_options
        self.record = record
        self.backend = backend


class _RLlibSpec:
    """An RLlib callback class or instance given to the bridge, and the hooks it overrides."""

    def __init__(self, target: object, hooks: list[str]) -> None:
        self.target = target
        self.hooks = hooks

    def build(self, extra: Mapping[str, Any]) -> ForeignCallback:
        target = self.target() if isinstance(self.target, type) else self.target
        return adapt(target, self.hooks, extra)


class _Bridge:
    """One RLlibCallback instance's bus, as the driver's or as one EnvRunner's."""

    def __init__(self, spec: _Spec, base: type, source: str, *, driver: bool) -> None:
        self.extra: dict[str, Any] = {}
        callbacks = [i.build(self.extra) if isinstance(i, _RLlibSpec) else i for i in spec.items]
        record = spec.record if driver else None
        collect = spec.record is not None and not driver
        self.bus = SyncBus(
            callbacks,
            spec.bus_options,
            source=source,
            backend=spec.backend,
            record=record,
            collect=collect,
            producer="rllib",  # a replay of the recording follows RLlib's cycle
        )
        self.spec = spec
        self.created = self.bus.dispatcher(EpisodeCreated)
        self.started = self.bus.dispatcher(EpisodeStart)
        self.stepped = self.bus.dispatcher(EpisodeStep)
        self.ended = self.bus.dispatcher(EpisodeEnd)
        self._multi_agent: bool | None = None
        self._runner_ref: weakref.ref[Any] | None = None
        weakref.finalize(self, self.bus.close)

    def is_multi_agent(self, episode: Any) -> bool:
        """Tell whether this runner's episodes are multi-agent (decided by its first one)."""
        multi = self._multi_agent
        if multi is None:
            multi = self._multi_agent = hasattr(episode, "agent_episodes")
        return multi

    def attach(self, env_runner: Any) -> None:
        """Register as ``env_runner``'s bridge, for the driver to take its events."""
        self._runner_ref = weakref.ref(env_runner)
        with _lock:
            _runners.setdefault(self.spec.key, weakref.WeakSet()).add(self)

    def take(self, env_runner: Any) -> list[BaseEvent]:
        """Return this runner's kept events (if it is ``env_runner``'s bridge) and forget them."""
        collector = self.bus.collector
        if collector is None or self._runner_ref is None or self._runner_ref() is not env_runner:
            return []
        return collector.take()

    def take_events(self, group: Any) -> None:
        """Write the events ``group``'s runners kept (the driver, when recording)."""
        recorder = self.bus.recorder
        if recorder is None or group is None:
            return
        taken = group.foreach_env_runner(functools.partial(_take_events, self.spec.key))
        for events in taken:
            for event in events:
                recorder.record(event=event)

    def publish(self, event_type: type[BaseEvent], live: Mapping[str, Any], **fields: Any) -> None:
        """Publish one of the driver's events, and write it at once if recording (they are
        few, and a run may end at any of them: RLlib's ``stop()`` calls no callback)."""
        self.bus.publish(event_type, live, **fields)
        self.flush()

    def publish_evaluation(
        self,
        event_type: type[EvaluateEnd | EvaluateOfflineEnd],
        algorithm: Any,
        metrics_logger: Any,
        evaluation_metrics: Any,
    ) -> None:
        """Publish the end of an evaluation round (online or offline) with its metrics."""
        live = {
            "algorithm": algorithm,
            "metrics_logger": metrics_logger,
            "evaluation_metrics": evaluation_metrics,
        }
        if self.listens(event_type):  # else no copy of the metrics is made
            iteration = _iteration(algorithm, None)
            data = plain_result(evaluation_metrics)
            self.publish(event_type, live, training_iteration=iteration, evaluation_metrics=data)

    def listens(self, event_type: type[BaseEvent]) -> bool:
        """Tell whether some handler (or the recorder) takes ``event_type``."""
        return self.bus.dispatcher(event_type).call is not None

    def flush(self) -> None:
        """Write what the recorder holds (the driver, after each of its events)."""
        if self.bus.recorder is not None:
            self.bus.recorder.flush()


_lock = threading.Lock()
_runners: dict[str, weakref.WeakSet[_Bridge]] = {}


def _take_events(key: str, env_runner: Any) -> list[BaseEvent]:
    """Return the events this process's bridges of ``key`` kept for ``env_runner``.

    Runs in each EnvRunner's process (RLlib's ``foreach_env_runner``).
    """
    with _lock:
        bridges = list(_runners.get(key, ()))
    events: list[BaseEvent] = []
    for bridge in bridges:
        events.extend(bridge.take(env_runner))
    return events


def _episode_live(episode: Any, kw: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "episode": episode,
        "env_runner": kw.get("env_runner"),
        "metrics_logger": kw.get("metrics_logger"),
        "env": kw.get("env"),
        "rl_module": kw.get("rl_module"),
        "env_index": kw.get("env_index"),
    }


def _source(env_runner: Any) -> str:
    config = getattr(env_runner, "config", None)
    prefix = "eval_env_runner" if getattr(config, "in_evaluation", False) else "env_runner"
    return f"{prefix}:{getattr(env_runner, 'worker_index', 0)}"


def _iteration(algorithm: Any, result: Any) -> int:
    if isinstance(result, Mapping) and "training_iteration" in result:
        return int(result["training_iteration"])
    return int(getattr(algorithm, "iteration", 0) or 0)


def _wrap_spec(item: object, base: type) -> object:
    cls = item if isinstance(item, type) else type(item)
    if issubclass(cls, base):
        return _RLlibSpec(item, foreign_hooks(cls, base))
    return item


def _rllib_callback_base() -> type:
    try:
        from ray.rllib.callbacks.callbacks import RLlibCallback
    except ImportError as exc:
        raise ConfigError(
            f"rllib_callbacks() needs RLlib ({exc}); install it with: pip install 'hookbus[rllib]'"
        ) from exc
    base: type = RLlibCallback
    return base
