"""The bus inside a real RLlib run: an ``RLlibCallback`` class that publishes every hook call.

RLlib instantiates its callbacks class once in the Algorithm (on the driver) and once in
every EnvRunner (the local one and each remote actor). Each instance of the class made here
builds, on its first hook call, a bus of its own in its own process, holding the callbacks
given to ``rllib_callbacks``, and publishes every later call on it as hookbus's event, with
RLlib's live objects as the live arguments.

Recording: the driver's instance writes the file (``_rllib_driver``). A runner's instance
keeps its events (a ``Collector``) until the driver takes them, at each ``on_train_result``
and ``on_evaluate_end``, through RLlib's ``foreach_env_runner``: one file, every runner a
source, in order per source.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Mapping
from typing import Any

from hookbus.events import (
    AlgorithmInit,
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
)
from hookbus.kernel import ConfigError, check_callbacks

from ._bus import check_backend
from ._rllib_bridge import Factory, RLlibSpec, RunnerBridge, Spec, spec_item
from ._rllib_data import environment_fields, reset_fields, sample_fields, step_fields
from ._rllib_driver import DriverBridge, iteration_of

__all__ = ("rllib_callbacks",)

_ids = itertools.count()


def rllib_callbacks(
    *callbacks: object,
    record: str | os.PathLike[str] | None = None,
    async_backend: str = "asyncio",
    **bus_options: Any,
) -> type:
    """Return an ``RLlibCallback`` class that runs ``callbacks`` on a hookbus bus.

    Give the class to RLlib: ``config.callbacks(rllib_callbacks(MyCallback))``.
    ``callbacks`` are, in chain order, what ``config.callbacks(...)`` takes and hookbus's:
    ``RLlibCallback`` subclasses as you have them (classes, instances, or
    ``functools.partial(MyCallback, arg=...)``), lists of them, callables returning a
    callback (called in each process, as RLlib does), and hookbus ``Callback`` classes,
    instances and partials. ``bus_options`` are the Bus's keywords (``on_error=``,
    ``deadline=``, callables per hook: ``on_episode_end=fn``). ``record`` (a path) writes
    one hookbus recording of the whole run, on the driver. ``async_backend`` is the event
    loop ("asyncio" or "trio") async handlers run on.
    """
    base = _rllib_callback_base()
    check_backend(async_backend)
    items = [
        spec_item(c, base, f"rllib_callbacks() argument {i}")
        for i, c in enumerate(_flat(callbacks))
    ]
    check_callbacks([i for i in items if not isinstance(i, RLlibSpec | Factory)], **bus_options)
    path = None if record is None else os.path.abspath(os.fspath(record))
    if path is not None and not os.path.isdir(os.path.dirname(path)):
        raise ConfigError(f"record={record!r}: its folder does not exist")
    spec = Spec(f"{os.getpid()}-{next(_ids)}", items, dict(bus_options), path, async_backend)

    class HookbusCallbacks(base):  # type: ignore[misc, valid-type]
        """RLlib's callbacks class running hookbus's bus (``rllib_callbacks``)."""

        hookbus_spec = spec

        def __init__(self) -> None:
            super().__init__()
            self.hookbus: DriverBridge | RunnerBridge | None = None
            """This instance's bus and its role (driver or runner), once called."""
            self._runs: RunnerBridge | None = None  # the same, in an EnvRunner

        # --- the Algorithm's hooks (the driver) -----------------------------------------

        def on_algorithm_init(
            self, *, algorithm: Any, metrics_logger: Any = None, **kw: Any
        ) -> None:
            bridge = self._driver()
            bridge.follow(algorithm)
            live = {"algorithm": algorithm, "metrics_logger": metrics_logger}
            bridge.publish(AlgorithmInit, live, algorithm=type(algorithm).__name__)

        def on_train_result(
            self, *, algorithm: Any, metrics_logger: Any = None, result: Any = None, **kw: Any
        ) -> None:
            self._driver().train_result(algorithm, metrics_logger, result)

        def on_evaluate_start(
            self, *, algorithm: Any, metrics_logger: Any = None, **kw: Any
        ) -> None:
            live = {"algorithm": algorithm, "metrics_logger": metrics_logger}
            iteration = iteration_of(algorithm, None)
            self._driver().publish(EvaluateStart, live, training_iteration=iteration)

        def on_evaluate_end(
            self,
            *,
            algorithm: Any,
            metrics_logger: Any = None,
            evaluation_metrics: Any = None,
            **kw: Any,
        ) -> None:
            self._driver().evaluate_end(EvaluateEnd, algorithm, metrics_logger, evaluation_metrics)

        def on_evaluate_offline_start(
            self, *, algorithm: Any, metrics_logger: Any = None, **kw: Any
        ) -> None:
            live = {"algorithm": algorithm, "metrics_logger": metrics_logger}
            iteration = iteration_of(algorithm, None)
            self._driver().publish(EvaluateOfflineStart, live, training_iteration=iteration)

        def on_evaluate_offline_end(
            self,
            *,
            algorithm: Any,
            metrics_logger: Any = None,
            evaluation_metrics: Any = None,
            **kw: Any,
        ) -> None:
            self._driver().evaluate_end(
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
            bridge = self._runs or self._runner(kw["env_runner"])
            dispatcher = bridge.created
            if dispatcher.call is not None:
                fields = {
                    "episode_id": episode.id_,
                    "env_index": kw.get("env_index") or 0,
                    "multi_agent": bridge.is_multi_agent(episode),
                }
                bridge.bus.run(dispatcher, EpisodeCreated, _episode_live(episode, kw), fields)

        def on_episode_start(self, *, episode: Any, **kw: Any) -> None:
            bridge = self._runs or self._runner(kw["env_runner"])
            dispatcher = bridge.started
            if dispatcher.call is not None:
                fields = reset_fields(episode, bridge.is_multi_agent(episode))
                fields["env_index"] = kw.get("env_index") or 0
                bridge.bus.run(dispatcher, EpisodeStart, _episode_live(episode, kw), fields)

        def on_episode_step(self, *, episode: Any, **kw: Any) -> None:
            bridge = self._runs or self._runner(kw["env_runner"])
            dispatcher = bridge.stepped
            if dispatcher.call is not None:
                fields = step_fields(episode, bridge.is_multi_agent(episode))
                fields["env_index"] = kw.get("env_index") or 0
                live = _episode_live(episode, kw)
                control = bridge.bus.run(dispatcher, EpisodeStep, live, fields)
                if control is not None:
                    bridge.asked(control, live["metrics_logger"])

        def on_episode_end(self, *, episode: Any, **kw: Any) -> None:
            bridge = self._runs or self._runner(kw["env_runner"])
            dispatcher = bridge.ended
            if dispatcher.call is not None:
                fields = {
                    "episode_id": episode.id_,
                    "env_index": kw.get("env_index") or 0,
                    "terminated": bool(episode.is_terminated),
                    "truncated": bool(episode.is_truncated),
                }
                bridge.extra["prev_episode_chunks"] = kw.get("prev_episode_chunks")
                live = _episode_live(episode, kw)
                try:
                    control = bridge.bus.run(dispatcher, EpisodeEnd, live, fields)
                finally:
                    bridge.extra.clear()
                if control is not None:
                    bridge.asked(control, live["metrics_logger"])

        def on_sample_end(
            self, *, env_runner: Any, metrics_logger: Any = None, samples: Any = None, **kw: Any
        ) -> None:
            bridge = self._runs or self._runner(env_runner)
            live = {"env_runner": env_runner, "metrics_logger": metrics_logger, "samples": samples}
            dispatcher = bridge.bus.dispatcher(SampleEnd)
            if dispatcher.call is not None:
                control = bridge.bus.run(dispatcher, SampleEnd, live, sample_fields(samples))
                if control is not None:
                    bridge.asked(control, metrics_logger)

        # --- internals ------------------------------------------------------------------

        def _driver(self) -> DriverBridge:
            bridge = self.hookbus
            if bridge is None:
                bridge = self.hookbus = DriverBridge(spec, base)
            assert isinstance(bridge, DriverBridge)  # RLlib calls the Algorithm's hooks alone
            return bridge

        def _runner(self, env_runner: Any) -> RunnerBridge:
            bridge = self._runs
            if bridge is None:
                bridge = self._runs = RunnerBridge(spec, base, env_runner)
                self.hookbus = bridge
            return bridge

    HookbusCallbacks.__qualname__ = HookbusCallbacks.__name__ = "HookbusCallbacks"
    return HookbusCallbacks


def _flat(callbacks: Iterable[object]) -> list[object]:
    """Return ``callbacks`` with lists and tuples in it spread (``config.callbacks([A, B])``)."""
    flat: list[object] = []
    for item in callbacks:
        flat.extend(item if isinstance(item, list | tuple) else [item])
    return flat


def _episode_live(episode: Any, kw: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "episode": episode,
        "env_runner": kw.get("env_runner"),
        "metrics_logger": kw.get("metrics_logger"),
        "env": kw.get("env"),
        "rl_module": kw.get("rl_module"),
        "env_index": kw.get("env_index"),
    }


def _rllib_callback_base() -> type:
    try:
        from ray.rllib.callbacks.callbacks import RLlibCallback
    except ImportError as exc:
        raise ConfigError(
            f"rllib_callbacks() needs RLlib ({exc}); install it with: pip install 'hookbus[rllib]'"
        ) from exc
    base: type = RLlibCallback
    return base
