"""A hookbus bus driven from another framework's sync hook calls, in one process.

RLlib and Stable-Baselines3 call their callbacks synchronously, from whatever thread they
sample or train in. ``SyncBus`` turns each call into one published event: an all-sync chain
runs right there, on the caller's thread, with no event loop involved; a chain with an async
handler runs, whole and in order, on an event loop of the bridge's own (a daemon thread,
started on first need), while the caller waits. Either way the framework goes on only once
every handler has finished, as with its own callbacks.
"""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import msgspec

from hookbus.events import HOOKS, BaseEvent, TrainResult
from hookbus.kernel import Bus, Callback, ConfigError, Control, Dispatcher, Publisher, Recorder

from .._loop import LoopThread
from ._rllib_data import plain_result

__all__ = (
    "BACKENDS",
    "Collector",
    "ForeignCallback",
    "ResultRecorder",
    "SyncBus",
    "adapt",
    "check_backend",
    "foreign_hooks",
)

BACKENDS = ("asyncio", "trio")
"""The event loops an async handler of a bridge may run on."""

_log = logging.getLogger("hookbus.runners.bridges")


class Collector(Callback):
    """Keep every event in memory, to be taken by the process that writes the recording.

    An observer of every hook: where the recording's file lives in another process (RLlib's
    driver), a runner's events wait here until that process takes them (``take()``).
    """

    observer = True

    def __init__(self) -> None:
        super().__init__()
        self.events: list[BaseEvent] = []

    def collect(self, *, event: BaseEvent, **kwargs: Any) -> None:
        """Keep ``event`` (every hook's handler)."""
        self.events.append(event)

    def take(self) -> list[BaseEvent]:
        """Return the events kept so far, in order, and forget them."""
        events, self.events = self.events, []
        return events


for _hook in HOOKS:
    setattr(Collector, _hook, Collector.collect)
del _hook


class ForeignCallback:
    """A framework's own callback object, seen by the bus through the hooks it overrides.

    Made by ``adapt()``: its class has one method per overridden hook, each calling the
    target's as the framework would: the hook's live arguments by keyword, without
    ``event``, plus ``extra``'s keywords (arguments the framework passes that hookbus's hook
    has not, such as RLlib's ``prev_episode_chunks``; the bridge fills it per call).
    """

    def __init__(self, target: object, extra: Mapping[str, Any]) -> None:
        self.target = target
        self.extra = extra

    def __repr__(self) -> str:
        return f"<ForeignCallback {type(self.target).__qualname__}>"


def adapt(target: object, hooks: Iterable[str], extra: Mapping[str, Any]) -> ForeignCallback:
    """Return ``target`` (a framework's callback) as a callback of the bus's, for ``hooks``."""
    name = type(target).__qualname__
    methods = {hook: _forward(name, hook) for hook in hooks}
    adapted: ForeignCallback = type(name, (ForeignCallback,), methods)(target, extra)
    return adapted


def _forward(name: str, hook: str) -> Any:
    def call(self: ForeignCallback, *, event: BaseEvent, **kwargs: Any) -> Any:
        method = getattr(self.target, hook)
        extra = self.extra
        return method(**kwargs, **extra) if extra else method(**kwargs)

    call.__name__ = hook
    call.__qualname__ = f"{name}.{hook}"
    return call


def foreign_hooks(cls: type, base: type) -> list[str]:
    """Return the hooks that ``cls`` (a subclass of the framework's ``base``) overrides."""
    hooks = []
    for hook in HOOKS:
        method = getattr(cls, hook, None)
        if method is not None and method is not getattr(base, hook, None):
            hooks.append(hook)
    return hooks


class SyncBus:
    """One source's publisher onto a bus, for a framework calling hooks synchronously.

    ``callbacks`` are what ``Bus`` takes (framework callbacks already wrapped as
    ``ForeignCallback``); ``bus_options`` the Bus's keywords. ``record`` (a path) adds a
    ``Recorder`` (JSON lines for a ``.jsonl`` path, else msgpack), or is one; ``collect=True`` a
    ``Collector`` instead, for events recorded elsewhere.
    ``backend`` is the event loop an async handler runs on. ``acts_on`` names the
    ``Control`` requests the framework's bridge acts on (SB3's ``stop_training``): only a
    Control asking for something else is logged as ignored. ``producer`` names the
    framework in the header of a recording made here (``"sb3"``), with its version: a
    replay follows that framework's reduce cycle.
    """

    def __init__(
        self,
        callbacks: Sequence[object],
        bus_options: Mapping[str, Any],
        *,
        source: str,
        backend: str = "asyncio",
        record: str | os.PathLike[str] | Recorder | None = None,
        collect: bool = False,
        acts_on: Iterable[str] = (),
        producer: str = "",
    ) -> None:
        check_backend(backend)
        self.recorder = None if isinstance(record, str | os.PathLike) else record  # the caller's
        if isinstance(record, str | os.PathLike):  # .jsonl as JSON lines, else msgpack
            fmt = "jsonl" if os.fspath(record).endswith(".jsonl") else "msgpack"
            self.recorder = Recorder(record, format=fmt, **made_by(producer))
        self.collector = Collector() if collect else None
        observers = [c for c in (self.recorder, self.collector) if c is not None]
        self.bus = Bus([*callbacks, *observers], **bus_options)
        self.publisher = Publisher(self.bus, source)
        self._backend = backend
        self._loop: LoopThread | None = None
        self._warned_control = False
        self._acts_on = frozenset(acts_on)

    @property
    def source(self) -> str:
        """The source the events are published under (``"env_runner:1"``)."""
        return self.publisher.source

    def rename(self, source: str) -> None:
        """Publish under ``source`` from now on (known only once the framework says)."""
        self.publisher.source = source

    def dispatcher(self, event_type: type[BaseEvent]) -> Dispatcher:
        """Return the live dispatcher of ``event_type``: build no event if ``call`` is None."""
        return self.publisher.dispatcher(event_type)

    def publish(
        self, event_type: type[BaseEvent], live: Mapping[str, Any], **fields: Any
    ) -> Control | None:
        """Build ``event_type(**fields)`` if anyone listens and run its chain; return after,
        with the chain's Control (None if no handler asked for anything)."""
        dispatcher = self.publisher.dispatcher(event_type)
        if dispatcher.call is not None:
            return self.run(dispatcher, event_type, live, fields)
        return None

    def run(
        self,
        dispatcher: Dispatcher,
        event_type: type[BaseEvent],
        live: Mapping[str, Any],
        fields: Mapping[str, Any],
        publisher: Publisher | None = None,
    ) -> Control | None:
        """Number and build the event, then run ``dispatcher``'s (non-empty) chain on it;
        return the chain's Control. ``publisher`` (default: this bus's own) numbers it
        under its source: another ``Publisher`` of ``self.bus``, for a second source."""
        if publisher is None:
            publisher = self.publisher
        event = event_type(source=publisher.source, seq=publisher.next_seq(), **fields)
        call = dispatcher.call
        assert call is not None
        if dispatcher.is_async:
            control = self._loop_thread().call(_Call(call, event, live))
        else:
            control = call(event, **live)
        if control is not None and not self._acts_on.issuperset(control.requested):
            self._ignore(control, dispatcher.hook)
        return control

    def resolve(self, dispatcher: Dispatcher, result: Any) -> Control | None:
        """Return the Control of a chain ``dispatcher`` ran: ``result`` is what calling it
        gave (``runners.episodes.EpisodePublisher``'s methods return it), for an async
        chain the awaitable, run here on the bridge's event loop while the caller waits.
        A Control is checked against ``acts_on`` as ``run()`` checks it."""
        if dispatcher.is_async and result is not None:
            try:
                result = self._loop_thread().call(_awaited, result)
            except BaseException:
                if (
                    inspect.iscoroutine(result)
                    and inspect.getcoroutinestate(result) == "CORO_CREATED"
                ):
                    result.close()  # the loop never started it: no "never awaited" warning
                raise
        if result is not None and not self._acts_on.issuperset(result.requested):
            self._ignore(result, dispatcher.hook)
        control: Control | None = result
        return control

    def close(self) -> None:
        """Close the bus (its callbacks and recorder) and stop the event loop, if started."""
        loop, self._loop = self._loop, None
        try:
            self.bus.close()
        finally:
            if loop is not None:
                loop.close()

    def _loop_thread(self) -> LoopThread:
        loop = self._loop
        if loop is None:
            loop = self._loop = LoopThread("hookbus-bridge", backend=self._backend)
        return loop

    def _ignore(self, control: Control, hook: str) -> None:
        if not self._warned_control:
            self._warned_control = True
            ignored = sorted(set(control.requested) - self._acts_on)
            _log.warning(
                "a handler of %s returned %r; this bridge does not act on %s (only on: %s); "
                "ask the framework itself (RLlib's stopping criteria, an SB3 callback)",
                hook,
                control,
                ", ".join(ignored),
                ", ".join(sorted(self._acts_on)) or "none",
            )


class _Call:
    """``await call(event, **live)`` as a zero-argument coroutine function for the loop."""

    __slots__ = ("_call", "_event", "_live")

    def __init__(self, call: Any, event: BaseEvent, live: Mapping[str, Any]) -> None:
        self._call, self._event, self._live = call, event, live

    async def __call__(self) -> Control | None:
        result: Control | None = await self._call(self._event, **self._live)
        return result


async def _awaited(result: Awaitable[Control | None]) -> Control | None:
    """Return ``await result``: a chain's coroutine, made on the caller's thread."""
    return await result


_DISTRIBUTIONS = {"rllib": "ray", "sb3": "stable-baselines3"}


def made_by(producer: str) -> dict[str, str]:
    """Return the ``Recorder`` keywords naming ``producer`` and its installed version."""
    try:
        found = version(_DISTRIBUTIONS[producer])
    except (KeyError, PackageNotFoundError):
        found = ""
    return {"producer": producer, "producer_version": found}


class ResultRecorder(Recorder):
    """A bridge's Recorder that writes a ``TrainResult`` only when told (``write_result``),
    with the result as the framework reports it (``train()``'s return, SB3's dump), keys
    that handlers and the framework's later callbacks added included, not as its chain saw
    it. Every other event it records as it comes. JSON lines for a ``.jsonl`` path."""

    def __init__(self, path: str | os.PathLike[str], producer: str) -> None:
        fmt = "jsonl" if os.fspath(path).endswith(".jsonl") else "msgpack"
        super().__init__(path, format=fmt, **made_by(producer))  # replays follow its cycle
        self.pending: TrainResult | None = None

    def on_train_result(self, *, event: TrainResult, **kwargs: Any) -> None:
        """Keep the iteration's event (the chain's last handler): ``write_result`` writes it."""
        self.pending = event

    def write_result(self, result: Any) -> None:
        """Write the kept ``TrainResult`` with ``result`` as it is now, then the file."""
        event, self.pending = self.pending, None
        if event is not None:
            self.record(event=msgspec.structs.replace(event, result=plain_result(result)))
            self.flush()


def check_backend(backend: object) -> str:
    """Return ``backend`` if async handlers can run on it, else raise ConfigError."""
    if backend not in BACKENDS:
        raise ConfigError(
            f"async_backend={backend!r} is not an event loop the bridges run; allowed: "
            f"{', '.join(map(repr, BACKENDS))}"
        )
    return str(backend)
