"""What one bridge class sends to every process, and an EnvRunner's bus built from it.

``rllib_callbacks`` turns what it is given into a ``Spec``: hookbus callbacks as they are,
RLlib callbacks (classes, instances, partials) as ``RLlibSpec``, and other callables
returning a callback as ``Factory`` (RLlib calls ``config.callbacks(...)``'s callables in
every process; so does the bridge). Each process builds its callbacks from it once, on
its instance's first hook call (``build_callbacks``).
"""

from __future__ import annotations

import functools
import inspect
import threading
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from hookbus.events import HOOKS, BaseEvent, EpisodeCreated, EpisodeEnd, EpisodeStart, EpisodeStep
from hookbus.kernel import Callback, ConfigError, Control, check_callbacks

from ._bus import ForeignCallback, SyncBus, adapt, foreign_hooks

__all__ = (
    "STOP_KEY",
    "Factory",
    "RLlibSpec",
    "RunnerBridge",
    "Spec",
    "build_callbacks",
    "source_of",
    "spec_item",
    "take_events",
)

STOP_KEY = "hookbus_stop_training"
"""The metric an EnvRunner's bridge logs when one of its handlers asks to stop training:
RLlib brings it to the driver with the runner's other metrics, and the driver takes it out
of the result again (``_rllib_driver``)."""


class Spec:
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


class RLlibSpec:
    """An RLlib callback given to the bridge (a class, an instance or a ``functools.partial``
    of a class), and the hooks its class overrides."""

    def __init__(self, target: object, hooks: list[str]) -> None:
        self.target = target
        self.hooks = hooks

    def build(self, extra: Mapping[str, Any]) -> ForeignCallback:
        target = self.target
        if isinstance(target, type | functools.partial):
            target = target()
        return adapt(target, self.hooks, extra)


class Factory:
    """A callable given to the bridge that returns a callback (RLlib's or hookbus's).

    Called once per process, as RLlib calls what ``config.callbacks(...)`` is given; what
    it returns is checked there, since nothing tells it before the call.
    """

    def __init__(self, make: Callable[[], object]) -> None:
        self.make = make

    def build(self, extra: Mapping[str, Any], base: type) -> object:
        made = self.make()
        if isinstance(made, base) or (isinstance(made, type) and issubclass(made, base)):
            return RLlibSpec(made, foreign_hooks(_class_of(made), base)).build(extra)
        try:
            check_callbacks(made)
        except ConfigError as exc:
            raise ConfigError(
                f"rllib_callbacks() was given {self.make!r}, which returned {made!r}: a "
                f"callable given to it must return a callback (an RLlibCallback or a hookbus "
                f"Callback, a class or an instance); {exc}"
            ) from exc
        return made


def spec_item(item: object, base: type, where: str) -> object:
    """Return ``item`` (one of ``rllib_callbacks``'s arguments) as the spec holds it.

    ``where`` names it in messages. An RLlib callback becomes an ``RLlibSpec`` (a partial's
    arguments are checked against its class now); a callable that is no callback (a
    function, a lambda, a partial of a function) a ``Factory``; anything else is hookbus's,
    checked by the bus's rules.
    """
    made = item.func if isinstance(item, functools.partial) else item
    cls = _class_of(made)
    if issubclass(cls, base):
        if made is not item:
            _check_partial(item, cls, where)  # type: ignore[arg-type]
        return RLlibSpec(item, foreign_hooks(cls, base))
    if _is_factory(made):
        return Factory(item)  # type: ignore[arg-type]
    return item


def build_callbacks(spec: Spec, base: type, extra: Mapping[str, Any]) -> list[object]:
    """Return ``spec``'s callbacks as this process's bus takes them."""
    built: list[object] = []
    for item in spec.items:
        if isinstance(item, RLlibSpec):
            built.append(item.build(extra))
        elif isinstance(item, Factory):
            built.append(item.build(extra, base))
        else:
            built.append(item)
    return built


def _class_of(obj: object) -> type:
    return obj if isinstance(obj, type) else type(obj)


def _is_factory(obj: object) -> bool:
    """Whether ``obj`` is a callable that makes a callback rather than being one."""
    if isinstance(obj, type) or isinstance(obj, Callback) or not callable(obj):
        return False
    return not any(callable(getattr(obj, hook, None)) for hook in HOOKS)


def _check_partial(item: functools.partial[Any], cls: type, where: str) -> None:
    try:
        inspect.signature(cls).bind(*item.args, **item.keywords)
    except TypeError as exc:
        raise ConfigError(
            f"{where}: cannot instantiate {cls.__qualname__} with the partial's arguments "
            f"{item.args!r}, {item.keywords!r}: {exc}"
        ) from None
    except ValueError:  # no signature to read: instantiating it will tell
        pass


class RunnerBridge:
    """One EnvRunner's bus (the callbacks instance RLlib made in it)."""

    def __init__(self, spec: Spec, base: type, env_runner: Any) -> None:
        self.extra: dict[str, Any] = {}
        self.bus = SyncBus(
            build_callbacks(spec, base, self.extra),
            spec.bus_options,
            source=source_of(env_runner),
            backend=spec.backend,
            collect=spec.record is not None,
            acts_on=("stop_training",),
        )
        self.key = spec.key
        self.created = self.bus.dispatcher(EpisodeCreated)
        self.started = self.bus.dispatcher(EpisodeStart)
        self.stepped = self.bus.dispatcher(EpisodeStep)
        self.ended = self.bus.dispatcher(EpisodeEnd)
        self._multi_agent: bool | None = None
        self._runner_ref = weakref.ref(env_runner)
        with _lock:
            _runners.setdefault(spec.key, weakref.WeakSet()).add(self)
        weakref.finalize(self, self.bus.close)

    def is_multi_agent(self, episode: Any) -> bool:
        """Tell whether this runner's episodes are multi-agent (decided by its first one)."""
        multi = self._multi_agent
        if multi is None:
            multi = self._multi_agent = hasattr(episode, "agent_episodes")
        return multi

    def asked(self, control: Control, metrics_logger: Any) -> None:
        """Pass a handler's stop request on to the driver, in RLlib's metrics of this runner
        (RLlib lets a runner's callback do no more; the driver marks the result)."""
        if control.stop_training:
            logger = metrics_logger
            if logger is None:
                runner = self._runner_ref()
                logger = getattr(runner, "metrics", None)
            if logger is not None:
                logger.log_value(STOP_KEY, 1, reduce="sum")

    def take(self, env_runner: Any) -> list[BaseEvent]:
        """Return this runner's kept events (if it is ``env_runner``'s bridge) and forget them."""
        collector = self.bus.collector
        if collector is None or self._runner_ref() is not env_runner:
            return []
        return collector.take()


_lock = threading.Lock()
_runners: dict[str, weakref.WeakSet[RunnerBridge]] = {}


def take_events(key: str, env_runner: Any) -> tuple[str, list[BaseEvent]]:
    """Return ``env_runner``'s source and the events this process's bridges of ``key`` kept
    for it, forgetting them. Runs in each EnvRunner's process (``foreach_env_runner``)."""
    with _lock:
        bridges = list(_runners.get(key, ()))
    events: list[BaseEvent] = []
    for bridge in bridges:
        events.extend(bridge.take(env_runner))
    return source_of(env_runner), events


def source_of(env_runner: Any) -> str:
    """Return the source an EnvRunner's events are published under (``"env_runner:1"``)."""
    config = getattr(env_runner, "config", None)
    prefix = "eval_env_runner" if getattr(config, "in_evaluation", False) else "env_runner"
    return f"{prefix}:{getattr(env_runner, 'worker_index', 0)}"
