"""Ordering constraints: ``before=`` / ``after=`` / ``priority``, resolved once per change.

A hook's chain starts in its default order (class handlers, callables, ``subscribe()``-d
handlers). Constraints turn that into a graph: ``a.before = [b]`` is an edge a -> b,
``a.after = [b]`` an edge b -> a. The chain is a stable topological sort of that graph:
among the handlers whose predecessors have all run, the most urgent goes first: the highest
``priority``, ties broken by default order, where a handler that must run before others
counts as urgent as the most urgent of them (``_urgency``). So with no constraint and every
priority 0 the chain is the default order, exactly as before constraints existed.

This runs when subscribers change, never per publish: the compiled chain is the resolved
order (``_chain``), so dispatch costs what it cost before.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ._chain import Handler
from ._errors import ConfigError

__all__ = (
    "ChainEntry",
    "ChainExplanation",
    "aliases",
    "check_refs",
    "explain",
    "matches",
    "placement",
    "resolve",
)

Ref = Any  # a handler name (str), a Callback class, or the subscribed callable itself


def aliases(handler: Handler) -> set[str]:
    """Return the names a constraint may use for ``handler``.

    ``Debug.on_episode_end`` or ``Debug`` for a class handler; ``f1`` or ``my_module.f1``
    for a function (``handler.name`` is always one of them).
    """
    names = {handler.name}
    fn = handler.fn
    owner = getattr(fn, "__self__", None)
    if owner is not None and not isinstance(owner, type):
        names.add(type(owner).__qualname__)
        names.add(type(owner).__name__)
    qualname = getattr(fn, "__qualname__", None)
    if isinstance(qualname, str):
        names.add(qualname)
        names.add(qualname.rsplit(".", 1)[-1] if owner is None else qualname)
    return names


def matches(ref: Ref, handler: Handler) -> bool:
    """Tell whether the constraint target ``ref`` names ``handler``."""
    if isinstance(ref, str):
        return ref in aliases(handler)
    if isinstance(ref, type):
        owner = getattr(handler.fn, "__self__", None)
        return owner is not None and isinstance(owner, ref)
    return bool(handler.fn == ref)


def check_refs(new: Iterable[Handler], known: Sequence[Handler]) -> None:
    """Raise ConfigError if a constraint of a ``new`` handler names no handler in ``known``.

    ``known`` is every handler on the bus (all hooks, the new ones included): a constraint
    may name a handler that is not in every hook's chain, where it then constrains nothing.
    """
    for handler in new:
        for kind, refs in (("before", handler.before), ("after", handler.after)):
            for ref in refs:
                if not any(matches(ref, other) for other in known):
                    names = sorted({name for h in known for name in _display_names(h)})
                    raise ConfigError(
                        f"{kind}={_ref_name(ref)!r} of handler {handler.name} names no "
                        f"subscriber of this bus; known: {', '.join(names) or 'none'}"
                    )


def resolve(hook: str, handlers: Sequence[Handler]) -> list[Handler]:
    """Return ``handlers`` (in default order) in their resolved order; ConfigError on a cycle."""
    if not any(h.before or h.after or h.priority for h in handlers):
        return list(handlers)  # the common case: nothing to resolve
    successors = _edges(handlers)
    indegree = [0] * len(handlers)
    for targets in successors:
        for j in targets:
            indegree[j] += 1
    urgency = _urgency(handlers, successors)
    ready = [(urgency[i], i) for i in range(len(handlers)) if not indegree[i]]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        _, i = heapq.heappop(ready)
        order.append(i)
        for j in successors[i]:
            indegree[j] -= 1
            if not indegree[j]:
                heapq.heappush(ready, (urgency[j], j))
    if len(order) < len(handlers):
        cycle = _find_cycle(successors, {i for i in range(len(handlers)) if indegree[i]})
        path = " -> ".join(handlers[i].name for i in cycle)
        raise ConfigError(
            f"the before=/after= constraints of hook {hook!r} form a cycle: {path} "
            f"(each must run before the next); remove one of them"
        )
    return [handlers[i] for i in order]


@dataclass(frozen=True, slots=True)
class ChainEntry:
    """One handler of a resolved chain and why it is where it is."""

    name: str
    section: str
    """``"class"``, ``"callable"``, ``"subscribed"`` or ``"stream"``: its default-order part."""
    position: int
    """Its index in the default order."""
    priority: int
    before: tuple[str, ...]
    after: tuple[str, ...]

    @property
    def why(self) -> str:
        """Say in words what placed this handler here."""
        parts = [f"{self.section} #{self.position}"]
        if self.priority:
            parts.append(f"priority {self.priority}")
        if self.before:
            parts.append(f"before {', '.join(self.before)}")
        if self.after:
            parts.append(f"after {', '.join(self.after)}")
        return "; ".join(parts)


@dataclass(frozen=True, slots=True)
class ChainExplanation:
    """A hook's resolved chain, as ``Bus.explain(hook)`` returns it; ``print()`` shows it."""

    hook: str
    entries: tuple[ChainEntry, ...]

    @property
    def names(self) -> list[str]:
        """The handlers' names, in the order they run."""
        return [e.name for e in self.entries]

    def __str__(self) -> str:
        if not self.entries:
            return f"{self.hook}: no subscribers"
        width = max(len(e.name) for e in self.entries)
        lines = [f"{self.hook}:"]
        for i, e in enumerate(self.entries, 1):
            lines.append(f"  {i}. {e.name:<{width}}  ({e.why})")
        return "\n".join(lines)


def explain(
    hook: str, resolved: Sequence[Handler], sections: Callable[[Handler], tuple[str, int]]
) -> ChainExplanation:
    """Describe ``resolved``; ``sections(h)`` gives its default-order part and index."""
    entries = []
    for h in resolved:
        section, position = sections(h)
        before = tuple(_ref_name(r) for r in h.before)
        after = tuple(_ref_name(r) for r in h.after)
        entries.append(ChainEntry(h.name, section, position, h.priority, before, after))
    return ChainExplanation(hook, tuple(entries))


# --- internals ------------------------------------------------------------------------------


def _edges(handlers: Sequence[Handler]) -> list[list[int]]:
    successors: list[list[int]] = [[] for _ in handlers]
    for i, h in enumerate(handlers):
        for ref in h.before:
            successors[i] += [j for j, g in enumerate(handlers) if j != i and matches(ref, g)]
        for ref in h.after:
            for j, g in enumerate(handlers):
                if j != i and matches(ref, g):
                    successors[j].append(i)
    return successors


def _urgency(handlers: Sequence[Handler], successors: list[list[int]]) -> list[tuple[int, int]]:
    """Return each handler's sort key: the most urgent of itself and all it must precede.

    Urgency is (-priority, default index), smaller first. A handler that must run before
    ``B`` inherits ``B``'s urgency, so ``before="B"`` puts it just ahead of ``B`` instead of
    ahead of whatever happened to be free at the time (``[A, B] + s(before=B)`` runs
    ``A, s, B``, and ``t(before=A)`` then runs first, not after ``B``).
    """
    keys = []
    for i in range(len(handlers)):
        seen, todo = {i}, [i]
        while todo:  # every handler reachable from i (cycles are reported by the caller)
            for j in successors[todo.pop()]:
                if j not in seen:
                    seen.add(j)
                    todo.append(j)
        keys.append(min((-handlers[j].priority, j) for j in seen))
    return keys


def _find_cycle(successors: list[list[int]], stuck: set[int]) -> list[int]:
    """Return one cycle among the ``stuck`` nodes, closed (``[a, b, a]``), in run order."""
    # Every stuck node kept an in-edge from another stuck node (finished nodes released
    # theirs), so walking predecessors never dead-ends and must come back to a node.
    predecessors: dict[int, list[int]] = {i: [] for i in stuck}
    for i in stuck:
        for j in successors[i]:
            if j in stuck:
                predecessors[j].append(i)
    node = min(stuck)
    seen: dict[int, int] = {}
    path: list[int] = []
    while node not in seen:
        seen[node] = len(path)
        path.append(node)
        node = predecessors[node][0]
    cycle = [*path[seen[node] :], node]
    cycle.reverse()
    return cycle


def _display_names(h: Handler) -> list[str]:
    owner = getattr(h.fn, "__self__", None)
    if owner is not None and not isinstance(owner, type):
        return [type(owner).__qualname__, h.name]
    return [h.name]


def _ref_name(ref: Ref) -> str:
    if isinstance(ref, str):
        return ref
    if isinstance(ref, type):
        return ref.__qualname__
    return str(getattr(ref, "__qualname__", None) or getattr(ref, "__name__", None) or ref)


def placement(
    before: object, after: object, priority: object, where: str
) -> tuple[tuple[Ref, ...], tuple[Ref, ...], int]:
    """Check and normalise one subscriber's constraints; ``where`` names it in messages."""
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise ConfigError(f"priority of {where} must be an int, got {priority!r}")
    refs = []
    for kind, value in (("before", before), ("after", after)):
        items = () if value is None else value if isinstance(value, list | tuple) else (value,)
        for ref in items:
            if not (isinstance(ref, str) or callable(ref)):
                raise ConfigError(
                    f"{kind}= of {where} takes handler names, Callback classes or the "
                    f"callables themselves, got {ref!r}"
                )
        refs.append(tuple(items))
    return refs[0], refs[1], priority
