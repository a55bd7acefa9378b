"""The bus: ordered subscriber chains per hook, compiled on change, published to by runners."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from threading import get_ident
from types import TracebackType
from typing import Any

import anyio
from anyio.abc import TaskGroup

from hookbus.events import BaseEvent, event_types

from ._callback import Callback, instantiate, overridden_hooks, warn_stray_hooks
from ._chain import Handler, describe, is_async_callable
from ._chains import ChainTable
from ._checks import as_list, check_callback, check_handler, checked_callbacks
from ._consumers import join_consumers, start_consumer
from ._control import Control
from ._dispatcher import Dispatcher
from ._errors import BusClosedError, ConfigError
from ._history import Retained
from ._hooks import event_type_for, hook_name
from ._options import BusOptions, check_on_error
from ._order import ChainExplanation, placement
from ._plugins import load_plugins
from ._services import ServiceRegistry
from ._stats import BusStatistics, Timings, check_seconds
from ._stream import EventStream
from ._threads import LoopHome

__all__ = ("Bus", "BusStatistics", "Dispatcher")


class Bus:
    """Publish typed events to ordered chains of handlers, on asyncio or trio.

    Takes the arguments of ``config.callbacks(...)``: ``callbacks_class`` (a Callback class or
    instance, or a list of them), one keyword per hook with a callable or a list of them
    (``on_episode_end=[f, g]``), and the options of ``BusOptions`` (``on_error``,
    ``plugins``, ``quarantine_after``, ``statistics``, ``deadline``, ``watchdog``), which
    says what each does; ``bus.options`` keeps them. Each hook's chain is: the classes'
    handlers in order (plugins after the given classes), then the callables in order, then
    handlers added with ``subscribe()`` in the order added, then streams (unless ordering
    constraints say otherwise: docs/subscribing.md).
    """

    def __init__(
        self,
        callbacks_class: object = None,
        *,
        on_error: str = "raise",
        plugins: bool | Sequence[str] = False,
        quarantine_after: int = 3,
        statistics: bool = False,
        deadline: float | None = None,
        watchdog: float | None = None,
        **hook_callables: Any,
    ) -> None:
        self.options = options = BusOptions.pick(locals())
        """The bus's options (as given, checked)."""
        timings = Timings(
            statistics=options.statistics, deadline=options.deadline, watchdog=options.watchdog
        )
        plugin_classes = load_plugins(options.plugins)
        for cls in plugin_classes:  # checked before any of the given classes is instantiated
            check_callback(cls, f"plugin {cls.__qualname__}")
        self._chains = ChainTable(
            on_error=options.on_error, quarantine_after=options.quarantine_after, timings=timings
        )
        self._dispatchers = self._chains.dispatchers
        self._closed = False
        self._home = LoopHome()  # the thread whose event loop the bus runs in (_threads)
        self._streams: list[EventStream] = []
        self._retained = Retained(self._chains)
        self._tasks: TaskGroup | None = None  # consume()'s, while inside ``async with``
        self.services = ServiceRegistry()
        """Named services shared through this bus (``provide``, ``get``, ``remove``)."""

        self.callbacks: tuple[object, ...] = ()
        """The class handlers' instances, in chain order (plugins after the given ones)."""
        self.add_callbacks(callbacks_class, **hook_callables)
        if plugin_classes:  # after the given classes, in their section of each chain
            self.add_callbacks(plugin_classes)

    # --- subscribing --------------------------------------------------------------------

    def add_callbacks(self, callbacks_class: object = None, **hook_callables: Any) -> None:
        """Append class handlers and per-hook callables, as if given to the constructor.

        The classes (or instances) go after the classes already there, the callables after
        the callables: each stays in its section of the chain. Everything is checked before
        anything is added or instantiated: a bad argument raises ConfigError naming it.
        """
        if self._closed:
            raise BusClosedError("cannot add callbacks to a closed bus")
        new_callables: dict[str, list[Handler]] = {}
        for name, value in hook_callables.items():
            hook = hook_name(name)
            new_callables[hook] = [Handler.of(check_handler(fn, hook)) for fn in as_list(value)]
        added = instantiate(checked_callbacks(callbacks_class))
        new_classes: dict[str, list[Handler]] = {}
        for callback in added:
            warn_stray_hooks(callback)
            options = _class_options(callback)
            for hook in overridden_hooks(callback):
                handler = Handler.of(getattr(callback, hook), **options)
                new_classes.setdefault(hook, []).append(handler)
        self._chains.add({"class": new_classes, "callable": new_callables})
        self.callbacks = (*self.callbacks, *added)

    def subscribe(
        self,
        event_type: type[BaseEvent] | str,
        fn: Callable[..., Any],
        *,
        before: object = None,
        after: object = None,
        priority: int = 0,
        on_error: str | None = None,
        deadline: float | None = None,
    ) -> None:
        """Add ``fn`` at the end of the chain of ``event_type`` (an event type or hook name).

        ``fn`` is called as ``fn(event=..., **live_arguments)``; it may be async.
        ``before`` / ``after`` (a handler name, a Callback class, a subscribed callable, or a
        list of them) and ``priority`` (higher runs earlier; default 0) move it within the
        chain (docs/subscribing.md, "Ordering"); a cycle or an unknown name is a ConfigError.
        ``on_error`` overrides the bus's error policy for this handler (docs/errors.md);
        ``deadline`` (seconds) the bus's deadline (an async handler past it is cancelled).
        """
        hook = self._open_hook(event_type)
        if on_error is not None:
            check_on_error(on_error)
        first, then, rank = placement(before, after, priority, describe(fn))
        handler = Handler.of(
            check_handler(fn, hook),
            observer=True,
            before=first,
            after=then,
            priority=rank,
            on_error=on_error,
            deadline=check_seconds(deadline, "deadline"),
        )
        self._chains.add({"subscribed": {hook: [handler]}})

    def unsubscribe(self, event_type: type[BaseEvent] | str, fn: Callable[..., Any]) -> None:
        """Remove the first ``subscribe()``-d handler equal to ``fn`` from the chain."""
        hook = event_type_for(event_type).hook
        if not self._chains.remove("subscribed", hook, lambda h: h.fn == fn):
            raise ConfigError(f"{fn!r} is not subscribed to {hook!r}")

    def has_subscribers(self, event_type: type[BaseEvent]) -> bool:
        """Tell whether publishing ``event_type`` would run anything (else build no event)."""
        try:
            return self._dispatchers[event_type].call is not None
        except KeyError:  # an event type of yours, first met (or no event type: ConfigError)
            return self._chains.dispatcher(event_type).call is not None

    def dispatcher(self, event_type: type[BaseEvent] | str) -> Dispatcher:
        """Return the live dispatcher of ``event_type``, for publishers on a hot path."""
        return self._chains.dispatcher(event_type_for(event_type))

    @contextlib.asynccontextmanager
    async def stream(
        self,
        *event_types: type[BaseEvent] | str,
        buffer: int = 1000,
        overflow: str = "block",
        history: int = 0,
    ) -> AsyncIterator[EventStream]:
        """Observe events of ``event_types`` (all, if none given) through a bounded buffer.

        The stream's feeder runs last in each chain. ``overflow="block"`` makes publishers
        wait while the buffer is full; ``"drop_oldest"`` never waits and counts drops.
        ``history=k`` starts it with the last k events the bus retained of these types
        (``retain()``), in publish order, then the new ones: none lost, none twice.
        """
        stream, leave = self._open_stream(event_types, buffer, overflow, history)
        try:
            yield stream
        finally:
            leave()

    def retain(self, *event_types: type[BaseEvent] | str, last: int) -> None:
        """Keep the last ``last`` events of each of ``event_types`` for late streams.

        A stream opened with ``history=k`` starts with the last k of them. Retaining is a
        subscriber (so the events are built, as for any subscriber); ``last=0`` stops it.
        Calling it again for a type changes how many are kept (the newest stay).
        """
        self._retained.retain([self._open_hook(t) for t in event_types], last)

    def consume(
        self,
        fn: Callable[[EventStream], Awaitable[Any]],
        *event_types: type[BaseEvent] | str,
        buffer: int = 1000,
        overflow: str = "block",
        history: int = 0,
    ) -> EventStream:
        """Run ``await fn(stream)`` in a task the bus owns, on a stream opened now.

        The stream (``stream()``'s arguments) subscribes before this returns, so nothing
        published after the call is missed. Only inside ``async with Bus() as bus``: leaving
        that block closes the bus, so the stream ends once ``fn`` has drained it, and waits
        for ``fn`` to return. An exception in ``fn`` cancels the block and propagates (in an
        ExceptionGroup, as from any task group). Returns the stream (``dropped``, ...).
        """
        if self._closed:
            raise BusClosedError("cannot consume from a closed bus")
        if self._tasks is None:
            raise ConfigError(
                "consume() runs its consumer in a task the bus owns; enter the bus with "
                "'async with Bus() as bus:' first"
            )
        if not is_async_callable(fn):
            raise ConfigError(f"consume() takes an async function of the stream, got {fn!r}")
        stream, leave = self._open_stream(event_types, buffer, overflow, history)
        start_consumer(self._tasks, fn, stream, leave)
        return stream

    # --- publishing ---------------------------------------------------------------------

    async def publish(self, event: BaseEvent, /, **live: Any) -> Control | None:
        """Run the chain of ``event``'s hook with ``event=event`` and the live arguments.

        Returns once every handler has finished, in order: the handlers' combined Control
        for a hook that accepts one (docs/control.md), else None. A live argument the hook
        does not have is a TypeError; one left out reaches handlers as None. From a thread
        other than the loop's, a WrongThreadError naming ``publish_threadsafe``; on a
        closed bus, a BusClosedError, and nothing runs.
        """
        if get_ident() != self._home.ident:  # the one thread check (docs/embedding.md)
            self._home.adopt("Bus.publish()")
        try:
            dispatcher = self._dispatchers[type(event)]
        except KeyError:  # an event type of yours, first met here: nobody subscribed yet
            dispatcher = self._first(event, "publish")
        call = dispatcher.call
        if call is None:
            return None
        if dispatcher.is_async:
            control: Control | None = await call(event, **live)
            return control
        return call(event, **live)  # type: ignore[no-any-return]

    async def forward(self, event: BaseEvent, /, **live: Any) -> None:
        """Run only the observers of ``event``'s hook: for events that happened elsewhere.

        Worker processes run the config's callbacks themselves and send their events here;
        the observers (``observer = True`` classes, ``subscribe()`` handlers and streams)
        see them through this, in order per source.
        """
        if get_ident() != self._home.ident:
            self._home.adopt("Bus.forward()")
        try:
            dispatcher = self._dispatchers[type(event)]
        except KeyError:
            dispatcher = self._first(event, "forward")
        call = dispatcher.observe
        if call is None:
            return
        if dispatcher.observe_is_async:
            await call(event, **live)
        else:
            call(event, **live)

    def publish_threadsafe(self, event: BaseEvent, /, **live: Any) -> Control | None:
        """Publish ``event`` from another thread: run ``publish()`` in the bus's loop, wait.

        The way in from any thread but the bus's own (a ``threading.Thread``, an
        ``anyio.to_thread`` worker): the publish runs as a task of the bus's event loop,
        one of its publishes like any other, so a sync chain never overlaps another.
        Returns what ``publish()`` returns and raises what it raises; WrongThreadError on
        the loop's own thread (await ``publish()`` there), BusClosedError once closed.
        """
        if self._closed:
            raise BusClosedError(f"cannot publish {type(event).__name__}: the bus is closed")
        call = functools.partial(self.publish, event, **live)
        return self._home.run(call, "Bus.publish_threadsafe()")

    def observed_hooks(self) -> frozenset[str]:
        """Return the hooks that have at least one observer (what workers must forward)."""
        return frozenset(d.hook for d in self._dispatchers.values() if d.observe is not None)

    def explain(self, event_type: type[BaseEvent] | str) -> ChainExplanation:
        """Return the resolved chain of ``event_type``, each handler with why it is there.

        ``.names`` lists the handlers in run order; ``print()`` shows a numbered table.
        """
        return self._chains.explain(self._chains.dispatcher(event_type_for(event_type)).hook)

    # --- state and lifecycle ------------------------------------------------------------

    def statistics(self) -> BusStatistics:
        """Return a snapshot of the subscriber and error counters."""
        policies = self._chains.policies
        errors = policies.errors
        quarantined = {hook: tuple(names) for hook, names in policies.quarantined.items()}
        return BusStatistics(
            self._chains.counts(),
            sum(errors.values()),
            dict(errors),
            quarantined,
            self._chains.timings.snapshot(),
        )

    @property
    def on_error(self) -> str:
        """The bus's error policy; a subscriber's own ``on_error`` overrides it."""
        return self._chains.policies.default

    @property
    def closed(self) -> bool:
        """Whether ``close()`` has run."""
        return self._closed

    def close(self) -> None:
        """End every stream, close every class handler (``close()``), refuse later publishes.

        Every later publish (``publish``, ``forward``, a Publisher's, a held dispatcher's
        ``call``) raises BusClosedError and runs nothing: the dispatchers are swapped for
        one that refuses, and stay so. A publish in flight (awaiting an async handler)
        goes on with its chain; reaching a stream that ended, it raises BusClosedError.
        Idempotent. Every callback is closed even if one raises; the first error is re-raised.
        """
        if self._closed:
            return
        self._closed = True
        for stream in self._streams:
            stream._end()
        self.services.clear()
        self._chains.close()
        first_error: BaseException | None = None
        for callback in self.callbacks:
            close = getattr(callback, "close", None)
            if close is None:
                continue
            try:
                close()
            except Exception as exc:
                exc.add_note(f"hookbus: raised by {type(callback).__qualname__}.close()")
                first_error = first_error or exc
        if first_error is not None:
            raise first_error

    async def __aenter__(self) -> Bus:
        self._home.enter()  # this loop's thread is the bus's (WrongThreadError if taken)
        # A task group for consume()'s consumers: they end when the block's end closes us.
        tasks = anyio.create_task_group()
        await tasks.__aenter__()
        self._tasks = tasks
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        tasks, self._tasks = self._tasks, None
        try:
            self.close()  # streams end: the consumers finish what is buffered, then return
        finally:
            if tasks is not None:
                return await join_consumers(tasks, exc)  # noqa: B012 -- close()'s error goes on
        return None

    def __enter__(self) -> Bus:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        counts = self._chains.counts()
        inner = ", ".join(f"{hook}={n}" for hook, n in counts.items()) or "no subscribers"
        return f"<Bus {'closed' if self._closed else 'open'}: {inner}>"

    # --- internals ----------------------------------------------------------------------

    def _open_hook(self, event_type: type[BaseEvent] | str) -> str:
        if self._closed:
            raise BusClosedError("cannot subscribe to a closed bus")
        return event_type_for(event_type).hook

    def _open_stream(
        self,
        event_types: Sequence[type[BaseEvent] | str],
        buffer: int,
        overflow: str,
        history: int,
    ) -> tuple[EventStream, Callable[[], None]]:
        """Subscribe a new stream (with its history, if asked); return it and its undoing."""
        hooks = [self._open_hook(t) for t in event_types] if event_types else list(_all_hooks())
        earlier = self._retained.last(hooks, history, buffer)
        stream = EventStream(buffer, overflow)
        put = stream.put if stream.overflow == "block" else stream.put_dropping_oldest
        feeder = Handler.of(put, takes_live=False, observer=True)
        self._chains.add({"stream": {hook: [feeder] for hook in hooks}})
        for event in earlier:  # no await since they were read: nothing slips in between
            stream.put_dropping_oldest(event)
        self._streams.append(stream)

        def leave() -> None:
            self._streams.remove(stream)
            for hook in hooks:
                self._chains.remove("stream", hook, lambda h: h is feeder)
            stream._discard()

        return stream, leave

    def _first(self, event: object, verb: str) -> Dispatcher:
        """Return the dispatcher of ``event``'s type, met for the first time (ConfigError if
        it is no event type)."""
        try:
            return self._chains.dispatcher(type(event))
        except ConfigError as exc:
            raise ConfigError(f"cannot {verb} {event!r}: not a hookbus event; {exc}") from None


def _all_hooks() -> list[str]:
    return list(event_types())


def _class_options(callback: object) -> dict[str, Any]:
    """Return the Handler options a class handler's instance sets by class attributes."""
    observer = bool(getattr(callback, "observer", False))
    if not isinstance(callback, Callback):  # duck-typed objects: no ordering attributes
        return {"observer": observer}
    where = type(callback).__qualname__
    before, after, priority = placement(callback.before, callback.after, callback.priority, where)
    on_error = callback.on_error
    if on_error is not None:
        check_on_error(on_error)
    deadline = check_seconds(callback.deadline, f"{where}.deadline")
    return {
        "deadline": deadline,
        "observer": observer,
        "before": before,
        "after": after,
        "priority": priority,
        "on_error": on_error,
    }
