"""Checking that an event stream keeps its contract: each source's numbering, and the rules
the events' packages install (``_rules``: the hooks' are the runners' episode rules).

One pass, per source, over any iterable of events (a recording, a list, what a stream got).
Rules that relate two hooks presuppose both in the stream (``Violations``), which is known
only at its end, so the whole stream is read and then the first break that counts raised.

Memory is bounded whatever the stream holds: the check tracks the first ``MAX_SOURCES``
sources it meets and counts the events of any later one without checking them (the hooks'
rules bound their episodes likewise, docs/recording.md).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from hookbus.events import BaseEvent

from ._errors import LifecycleError
from ._hooks import hook_name
from ._rules import LifecycleRules, Violations, rules_for

__all__ = ("MAX_SOURCES", "LifecycleSummary", "check_lifecycle")

MAX_SOURCES = 10_000
"""The most sources a check tracks: a source's numbering (and its rules' state) is kept for
the first ones met; the events of sources met later are counted (``unchecked_events``)."""


@dataclass(frozen=True)
class LifecycleSummary:
    """What ``check_lifecycle`` checked: counts to assert on.

    ``events``, ``sources`` and ``user_events`` are the kernel's; the other counts are
    what the installed rules report (the hooks' rules count episodes and restarts).
    """

    events: int
    """Events read."""
    sources: tuple[str, ...]
    """The sources seen, sorted (those tracked: the first ``MAX_SOURCES``, 10,000)."""
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
    unchecked_events: int = 0
    """Events of sources met after the first ``MAX_SOURCES`` (10,000): read and counted,
    never checked. Only a stream of more sources than any run has (a hostile file) has any."""
    dropped_episodes: int = 0
    """Episodes the check stopped tracking while they were open, because more were open at
    once than it tracks (10,000, the least recently active dropped first); among
    ``episodes``, not among ``open_episodes``. A later event of one is checked as of an
    episode the check does not know, and its rule says it may have been dropped."""


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
    start over there. Memory stays bounded whatever the stream holds: past ``MAX_SOURCES``
    sources, and past 10,000 episodes open at once, the summary says what was counted and
    not checked (``unchecked_events``, ``dropped_episodes``).
    """
    if hooks is not None:
        hooks = [hook_name(hook) for hook in hooks]  # a bad name is a ConfigError
    rules: dict[type[BaseEvent], LifecycleRules] = rules_for(lambda r: r.lifecycle_rules())
    checked = {cls.hook for cls in rules}
    gaps_allowed = hooks is not None and not checked <= set(hooks)
    violations = Violations()
    next_seq: dict[str, int] = {}  # per source: the seq its next checked event must have
    present: set[type[BaseEvent]] = set()
    user_events = unchecked = 0
    for event in events:
        own = rules.get(type(event))
        if own is None:  # no rule is about it
            user_events += 1
        elif event.source not in next_seq and len(next_seq) >= MAX_SOURCES:
            present.add(type(event))
            unchecked += 1  # a source past the bound: nothing of it is kept
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
        unchecked_events=unchecked,
        **counts,
    )
