"""One publisher's path onto the bus: numbered events, built only when someone listens."""

from __future__ import annotations

import difflib
import functools
from collections.abc import Collection, Mapping
from threading import get_ident
from typing import Any

import anyio

from hookbus.events import HOOKS, BaseEvent

from ._bus import Bus, Dispatcher
from ._control import Control, merge
from ._threads import ThreadLock

__all__ = ("Publisher",)


class Publisher:
    """Publish the events of one source (``"algorithm"``, ``"env_runner:1"``) to a bus.

    Every publisher in hookbus goes through one of these: it numbers the source's events
    (``seq``, gap-free), builds an event only if its hook has subscribers, and awaits the
    chain or calls it, as the chain is async or not. ``fixed`` live arguments (say
    ``algorithm=algo, metrics_logger=logger``) go to every hook that takes them.

    ``offload_sync`` names event types whose sync handlers run in a worker thread (an
    all-sync chain as a whole; in a chain with async handlers, each sync one), so that
    a sync handler may call blocking sync facades such as
    ``algorithm.env_runner_group.foreach_env(fn)``: they reach the event loop, which is free
    meanwhile. Only for hooks published when nothing else of the publisher runs (the
    Algorithm's ``on_train_result``, say): the handler then has the publisher to itself.
    """

    __slots__ = (
        "_dispatchers",
        "_fixed",
        "_fixed_all",
        "_home",
        "_offload",
        "_requests",
        "_serial",
        "bus",
        "seq",
        "source",
    )

    def __init__(
        self,
        bus: Bus,
        source: str,
        *,
        offload_sync: Collection[type[BaseEvent]] = (),
        **fixed: Any,
    ) -> None:
        self.bus = bus
        self.source = source
        self._home = bus._home  # the thread the bus belongs to (``_threads``)
        self._serial = ThreadLock()  # publish_threadsafe calls, one at a time
        self.seq = 0
        """The ``seq`` the next event gets."""
        self._offload = frozenset(offload_sync)
        self._requests: Control | None = None  # Controls not yet taken (take_control)
        self._fixed_all = fixed
        self._dispatchers: dict[type[BaseEvent], Dispatcher] = {}
        # Per hook, the fixed live arguments it takes (on_env_runners_recreated has no logger).
        self._fixed: dict[type[BaseEvent], dict[str, Any]] = {}
        for cls in HOOKS.values():
            self._add(cls)

    def dispatcher(self, event_type: type[BaseEvent]) -> Dispatcher:
        """Return the live dispatcher of ``event_type`` (for a per-step hot loop)."""
        try:
            return self._dispatchers[event_type]
        except KeyError:  # an event type of yours, first met
            return self._add(event_type)

    def wants(self, event_type: type[BaseEvent]) -> bool:
        """Tell whether ``event_type`` has subscribers (else publishing it costs nothing)."""
        return self.dispatcher(event_type).call is not None

    def next_seq(self) -> int:
        """Return the next sequence number of this source and count it."""
        seq = self.seq
        self.seq = seq + 1
        return seq

    async def publish(
        self, event_type: type[BaseEvent], live: Mapping[str, Any] | None = None, /, **fields: Any
    ) -> BaseEvent | None:
        """Build ``event_type(**fields)`` and run its chain with the live arguments.

        ``live`` are the hook's live arguments besides the fixed ones, by name (a name the
        hook does not take is a TypeError). Returns the event, or None if nobody listens
        (then nothing is built and no ``seq`` is used). Only from the thread of the bus's
        event loop (else a WrongThreadError naming ``publish_threadsafe``, and no ``seq``
        is used); on a closed bus, a BusClosedError.
        """
        if get_ident() != self._home.ident:  # before seq is touched: the one thread check
            self._home.adopt("Publisher.publish()")
        try:
            dispatcher = self._dispatchers[event_type]
        except KeyError:
            dispatcher = self._add(event_type)
        if dispatcher.call is None:
            return None
        try:
            event = event_type(source=self.source, seq=self.seq, **fields)
        except TypeError as exc:  # msgspec's message names neither the type nor its fields
            raise TypeError(_field_error(event_type, fields, exc)) from exc
        self.seq += 1  # only once built: a refused event leaves no gap in seq
        arguments = self._fixed[event_type]
        if live:
            arguments = {**arguments, **live}
        await self.run(dispatcher, event, arguments)
        return event

    def publish_threadsafe(
        self, event_type: type[BaseEvent], live: Mapping[str, Any] | None = None, /, **fields: Any
    ) -> BaseEvent | None:
        """Publish from another thread: run ``publish()`` in the bus's event loop and wait.

        The way in from any thread but the bus's own (``Bus.publish_threadsafe`` says
        more). Calls from several threads run one at a time (each chain finishes before
        the next call's starts), so their events reach every handler in ``seq`` order;
        ``seq`` stays gap-free with the loop's own publishes mixed in. Returns what
        ``publish()`` returns and raises what it raises. A handler must not call it on
        the publisher whose chain runs that handler (in a worker thread,
        ``offload_sync``): it would wait for itself.
        """
        call = functools.partial(self.publish, event_type, live, **fields)
        with self._serial:
            return self._home.run(call, "Publisher.publish_threadsafe()")

    async def run(
        self, dispatcher: Dispatcher, event: BaseEvent, arguments: Mapping[str, Any]
    ) -> Control | None:
        """Run ``dispatcher``'s chain (checked non-empty) on ``event`` with ``arguments``.

        Returns the chain's combined Control (None if no handler asked for anything); it is
        also kept for ``take_control()``.
        """
        call = dispatcher.call
        assert call is not None
        control: Control | None
        if dispatcher.is_async:
            if dispatcher.in_threads is not None and type(event) in self._offload:
                call = dispatcher.in_threads  # its sync handlers in threads, in chain order
            control = await call(event, **arguments)
        elif type(event) in self._offload:
            control = await anyio.to_thread.run_sync(functools.partial(call, event, **arguments))
        else:
            control = call(event, **arguments)
        if control is not None:
            self._requests = merge(self._requests, control, "")
        return control

    def add_control(self, control: Control) -> None:
        """Keep ``control`` for ``take_control()``: a chain's result the caller got by
        calling its dispatcher directly (the sampling loop's step hook)."""
        self._requests = merge(self._requests, control, "")

    def take_control(self) -> Control | None:
        """Return the Controls of every chain run since the last call, combined; forget them.

        None if no handler asked for anything. The Algorithm reports them in ``train()``'s
        result (docs/control.md).
        """
        control, self._requests = self._requests, None
        return control

    def set_fixed(self, **fixed: Any) -> None:
        """Replace fixed live arguments (an EnvRunner's new ``env`` after ``make_env()``)."""
        self._fixed_all = {**self._fixed_all, **fixed}
        for event_type in list(self._dispatchers):
            self._add(event_type)

    def _add(self, event_type: type[BaseEvent]) -> Dispatcher:
        dispatcher = self.bus.dispatcher(event_type)  # checked: ConfigError if no event type
        take = dispatcher.live_args
        self._fixed[event_type] = {k: v for k, v in self._fixed_all.items() if k in take}
        self._dispatchers[event_type] = dispatcher
        return dispatcher

    def __repr__(self) -> str:
        return f"<Publisher {self.source} seq={self.seq}>"


def _field_error(event_type: type[BaseEvent], fields: Mapping[str, Any], exc: TypeError) -> str:
    """Say which of ``fields`` ``event_type`` cannot be built from, and what its fields are."""
    own = [name for name in event_type.__struct_fields__ if name not in ("source", "seq")]
    name = event_type.__qualname__
    unknown = [key for key in fields if key not in event_type.__struct_fields__]
    if unknown:
        hints = []
        for key in unknown:
            close = difflib.get_close_matches(key, own, n=1)
            hints.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        what = f"{name} has no field {', '.join(hints)}"
    else:
        what = f"cannot build {name}: {exc}"
    listed = ", ".join(own) if own else "none besides source and seq"
    return f"{what}; its fields: {listed} (source and seq are the publisher's)"
