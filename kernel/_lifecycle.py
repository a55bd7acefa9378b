"""Checking that an event stream keeps its contract: each source's numbering, and the rules
the events' packages install (``_rules``: the hooks' are the runners' episode rules).

One pass, per source, over any iterable of events (a recording, a list, what a stream got).
Rules that relate two hooks presuppose both in the stream (``Violations``), which is known
only at its end, so the whole stream is read and then the first break that counts raised.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from hookbus.events import BaseEvent

from ._errors import LifecycleError
from ._hooks import hook_name
from ._rules import LifecycleRules, Violations, rules_for

__all__ = ("LifecycleSummary", "check_lifecycle")


@dataclass(frozen=True)
class LifecycleSummary:
    """What ``check_lifecycle`` checked: counts to assert on.

    ``events``, ``sources`` and ``user_events`` are the kernel's; the other counts are
    what the installed rules report (the hooks' rules count episodes and restarts).
    """

    events: int
    """Events read."""
    sources: tuple[str, ...]
    """The sources seen, sorted."""
    episodes: int = 0
    """Episodes seen (created or started), over all sources."""
    open_episodes: int = 0
    """Of those, episodes without ``on_episode_end`` when the stream ended."""
    user_events: int = 0
    """Events of types no installed rules are about (yours): read, and left unchecked."""
    restarts: int = 0
    """Restart markers read: an ``on_environment_created`` from a source seen before (a
    runner restarted after a failure, under its source)."""
    abandoned_episodes: int = 0
    """Episodes a restart left open (their runner failed mid-episode); among ``episodes``,
    not among ``open_episodes``."""


def check_lifecycle(
    events: Iterable[BaseEvent],
    *,
    hooks: Collection[str] | None = None,
    allow_open: bool = True,
) -> LifecycleSummary:
    """Check that ``events`` keep the hook contract, per source; return what was checked.

    ``events`` is any iterable of events in publication order: ``read_recording(path)``, a
    list, or what a stream or a handler got from a live bus. Raises ``LifecycleError``
    naming the first event that breaks a rule (docs/recording.md lists them). ``hooks`` are
    the hooks the stream was limited to (a recording header's ``hooks``), if it was: then
    ``seq`` need only increase, since the other hooks' events took numbers too. A rule
    relating two hooks is checked only if both occur in the stream. ``allow_open=False``
    also refuses episodes without ``on_episode_end`` when the stream ends. Events of your own
    types are read and counted (``user_events``), never checked: the rules are the hooks'
    (and those a package installs for its types, docs/recording.md). A source's numbering
    is checked over the checked events, so publish yours under a source of their own. A
    second ``on_environment_created`` from one source marks a restart of its runner: the
    episodes it left open are counted as ``abandoned_episodes``, and its numbering may
    start over there.
    """
    if hooks is not None:
        hooks = [hook_name(hook) for hook in hooks]  # a bad name is a ConfigError
    rules: dict[type[BaseEvent], LifecycleRules] = rules_for(lambda r: r.lifecycle_rules())
    checked = {cls.hook for cls in rules}
    gaps_allowed = hooks is not None and not checked <= set(hooks)
    violations = Violations()
    next_seq: dict[str, int] = {}  # per source: the seq its next checked event must have
    present: set[type[BaseEvent]] = set()
    user_events = 0
    for event in events:
        own = rules.get(type(event))
        if own is None:  # no rule is about it
            user_events += 1
        else:
            present.add(type(event))
            expected = next_seq.setdefault(event.source, event.seq)
            if own.restarts(event):  # a new life: its numbering may start over
                expected = event.seq
            if event.seq < expected or (event.seq > expected and not gaps_allowed):
                violations.flag(event, f"seq is not the source's next one ({expected})")
            next_seq[event.source] = event.seq + 1
            own.check(event, violations)
        violations.index += 1
    counts: dict[str, int] = {}
    for own in {id(r): r for r in rules.values()}.values():
        counts.update(own.finish(violations, allow_open))
    first = violations.first(present)
    if first is not None:
        event, rule = first
        raise LifecycleError(rule, event=event)
    return LifecycleSummary(
        events=violations.index,
        sources=tuple(sorted(next_seq)),
        user_events=user_events,
        **counts,
    )
