"""A bus's chain table: per hook, its handlers in four parts, resolved and compiled on change.

Each hook's chain is made of four parts, in this default order: class handlers, per-hook
callables, ``subscribe()``-d handlers and stream feeders. Whenever a part changes, the
hook's chain is resolved (ordering constraints, ``_order``) and compiled (``_chain``) into
its ``Dispatcher``: once for every handler (``call``), once for the observers alone
(``observe``, what ``Bus.forward`` runs) and, for a chain of sync and async handlers, once
with its sync handlers in worker threads (``in_threads``). Nothing here runs per publish.

The hooks' chains exist from the start; an event type of yours gets its chain (and its
``Dispatcher``) the first time the bus meets it: subscribed to, published, looked up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hookbus.events import HOOKS, BaseEvent

from ._chain import Handler, compile_chain
from ._dispatcher import Dispatcher
from ._errors import BusClosedError, ConfigError
from ._hooks import event_type_for, live_args_of
from ._order import ChainExplanation, check_refs, explain, resolve
from ._policy import ErrorPolicies
from ._stats import Timings

__all__ = ("PARTS", "ChainTable")

PARTS = ("class", "callable", "subscribed", "stream")
"""The parts of every chain, in default order (also the sections ``explain`` names)."""

Change = dict[str, dict[str, list[Handler]]]  # part -> hook -> handlers to append


class ChainTable:
    """Own every hook's handlers and keep each hook's ``Dispatcher`` compiled from them."""

    def __init__(self, *, on_error: str, quarantine_after: int, timings: Timings) -> None:
        self.timings = timings
        self.policies = ErrorPolicies(on_error, quarantine_after, self.quarantine)
        self.dispatchers = {cls: Dispatcher(cls) for cls in HOOKS.values()}
        self.parts: dict[str, dict[str, list[Handler]]] = {
            part: {hook: [] for hook in HOOKS} for part in PARTS
        }
        self._by_hook = {d.hook: d for d in self.dispatchers.values()}
        self._closed = False

    def dispatcher(self, event_type: object) -> Dispatcher:
        """Return the dispatcher of ``event_type``, making the chain of a type of yours.

        ``event_type`` is checked (``hookbus.events.event_type``): anything else is a
        ConfigError saying why.
        """
        found: Dispatcher | None = self.dispatchers.get(event_type)  # type: ignore[call-overload]
        if found is not None:
            return found
        cls = event_type_for(event_type)
        dispatcher = self._by_hook.get(cls.hook)
        if dispatcher is None:
            dispatcher = self._by_hook[cls.hook] = Dispatcher(cls)
            for part in PARTS:
                self.parts[part][cls.hook] = []
            if self._closed:
                _close(dispatcher)
        else:  # the class was defined again (a re-run notebook cell): the same chain
            dispatcher.event_type = cls
        self.dispatchers[cls] = dispatcher
        return dispatcher

    def add(self, change: Change) -> None:
        """Append ``change``'s handlers to their parts, then recompile; all or nothing.

        Constraints are checked first (unknown names), then every changed chain is resolved
        (cycles); a ConfigError leaves every chain as it was.
        """
        for hooks in change.values():
            for hook in hooks:
                self.dispatcher(hook)  # a hook of yours gets its chain
        added = [h for hooks in change.values() for hs in hooks.values() for h in hs]
        check_refs(added, [*self._everyone(), *added])
        undo = [
            (self.parts[p][hook], len(self.parts[p][hook])) for p in change for hook in change[p]
        ]
        for part, hooks in change.items():
            for hook, handlers in hooks.items():
                self.parts[part][hook].extend(handlers)
        changed = {hook for hooks in change.values() for hook in hooks}
        try:
            resolved = {hook: self.resolved(hook) for hook in changed}
        except ConfigError:
            for handlers, n in undo:
                del handlers[n:]
            raise
        for hook, handlers in resolved.items():
            self.recompile(hook, handlers)

    def remove(self, part: str, hook: str, match: Callable[[Handler], bool]) -> bool:
        """Remove the first handler of ``part`` of ``hook`` that ``match``-es; tell if any."""
        handlers = self.parts[part].get(hook, [])
        for i, handler in enumerate(handlers):
            if match(handler):
                del handlers[i]
                self.recompile(hook)
                return True
        return False

    def quarantine(self, hook: str, handler: Handler) -> None:
        """Take ``handler`` out of ``hook``'s chain (``on_error="quarantine"``)."""
        for part in PARTS:
            if self.remove(part, hook, lambda h: h is handler):
                return

    def resolved(self, hook: str) -> list[Handler]:
        """Return ``hook``'s chain in run order: constraints resolved, then the streams."""
        ordered = [h for part in PARTS[:3] for h in self.parts[part][hook]]
        return [*resolve(hook, ordered), *self.parts["stream"][hook]]

    def explain(self, hook: str) -> ChainExplanation:
        """Return ``hook``'s resolved chain, each handler with its part and default place."""
        default = [(h, part) for part in PARTS for h in self.parts[part][hook]]

        def where(handler: Handler) -> tuple[str, int]:
            i = next(i for i, (h, _) in enumerate(default) if h is handler)
            return default[i][1], i

        return explain(hook, self.resolved(hook), where)

    def counts(self) -> dict[str, int]:
        """Return the number of handlers per hook, hooks with none left out."""
        counts = {hook: sum(len(self.parts[p][hook]) for p in PARTS) for hook in self._by_hook}
        return {hook: n for hook, n in counts.items() if n}

    def recompile(self, hook: str, handlers: list[Handler] | None = None) -> None:
        """Compile ``hook``'s dispatcher from ``handlers`` (default: its resolved chain)."""
        if self._closed:  # a closed bus stays closed: a stream leaving, a quarantine
            return
        if handlers is None:
            handlers = self.resolved(hook)
        dispatcher = self._by_hook[hook]
        observers = [h for h in handlers if h.observer]
        dispatcher.call = self._compile(hook, "call", handlers)
        dispatcher.is_async = any(h.is_async for h in handlers)
        mixed = dispatcher.is_async and not all(h.is_async for h in handlers)
        dispatcher.in_threads = self._compile(hook, "in_threads", handlers) if mixed else None
        dispatcher.observe = self._compile(hook, "observe", observers)
        dispatcher.observe_is_async = any(h.is_async for h in observers)

    def close(self) -> None:
        """Make every dispatcher refuse to run (``BusClosedError``)."""
        self._closed = True
        for dispatcher in self._by_hook.values():
            _close(dispatcher)

    def _compile(self, hook: str, kind: str, handlers: list[Handler]) -> Callable[..., Any] | None:
        # kind: "call", "observe" or "in_threads" (the whole chain, sync handlers in threads)
        return compile_chain(
            hook,
            live_args_of(hook),
            handlers,
            policies=[self.policies.policy(h) for h in handlers],
            sinks=self.policies.sinks(hook),
            timing=self.timings.plan((hook, kind), handlers),
            in_threads=kind == "in_threads",
        )

    def _everyone(self) -> list[Handler]:
        return [h for part in self.parts.values() for hs in part.values() for h in hs]


def _close(dispatcher: Dispatcher) -> None:
    dispatcher.call, dispatcher.is_async, dispatcher.in_threads = _closed_bus, False, None
    dispatcher.observe, dispatcher.observe_is_async = _closed_bus, False


def _closed_bus(event: BaseEvent, *args: Any, **kwargs: Any) -> None:
    raise BusClosedError(f"cannot publish {type(event).__name__}: the bus is closed")
