"""Event rules: what a package teaches ``replay`` and ``check_lifecycle`` about its event types.

The kernel knows events only as typed records with live arguments. What a recorded event
means beyond that (which live objects to rebuild from it, which orders of events are
legal) belongs to the package that defines the events: hookbus's runners for the hooks
(episodes, learner updates), a service for its own types. Such a package declares an
object in the entry-point group ``hookbus.rules``; the kernel loads the installed ones the
first time replay or a lifecycle check runs. Installed code only: nothing a recording says
chooses what is loaded (SPEC.md, "Data never names code").

Without rules for its type, an event replays with ``metrics_logger`` only (if its type
declares it among its ``live_args``) and is counted, not checked, by ``check_lifecycle``.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from hookbus.events import BaseEvent

from ._errors import ConfigError

if TYPE_CHECKING:  # annotations only: the kernel loads no metrics (nor numpy) on import
    from hookbus.metrics import MetricsLogger

__all__ = (
    "MERGES",
    "RULES_GROUP",
    "EventRules",
    "LifecycleRules",
    "ReplayOutcome",
    "ReplayRules",
    "ReplaySettings",
    "Violations",
    "installed_rules",
    "replay_states",
    "rules_for",
)

RULES_GROUP = "hookbus.rules"
"""The entry-point group naming ``EventRules`` objects (docs/recording.md)."""


MERGES = ("framework", "pooled")
"""What replay's ``merge=`` takes (docs/recording.md)."""


class ReplaySettings(NamedTuple):
    """What a replay tells rules whose ``replay_rules`` takes ``settings=``.

    The kernel knows no producer's rules: it passes what the recording says and what the
    caller asked for, and the rules choose the reduce cycle their events follow.
    """

    producer: str = ""
    """Whose recording it is: its header's ``producer`` (``""`` for hookbus's own runners
    and for files from before that field), or replay's ``producer=``."""
    merge: str = "framework"
    """``"framework"`` (follow the producer's reduce cycle and merge) or ``"pooled"``."""
    logger_given: bool = False
    """Whether the caller gave replay its own ``metrics_logger``."""


class ReplayOutcome(NamedTuple):
    """What replay state may report at the end (``ReplayRules.outcome()``, optional)."""

    iterations: list[dict[str, Any]]
    """The results of each iteration the recording holds, as its producer reported them."""
    metrics: dict[str, Any] | None = None
    """The final metrics, if not the replay logger's ``results()``."""
    logger: Any = None
    """The logger to hand the caller, if not the replay's ``metrics_logger``."""


class ReplayRules(Protocol):
    """One replay's state for some event types: rebuild the live arguments of their events."""

    def live_arguments(self, event: BaseEvent) -> dict[str, Any]:
        """Take ``event`` into the state; return the live arguments to publish it with.

        Called for every recorded event of the rules' types, in order, also for those
        that ``hooks=`` or ``sources=`` keep from being published.
        """
        ...

    def published(self, event: BaseEvent) -> None:
        """Note that ``event``'s handlers have all run (a published event only)."""
        ...

    # Optionally, ``outcome() -> ReplayOutcome``: the iterations (and final metrics) the
    # events gave, read once the stream is done (``replay_into``'s ``iterations``).


class Violations:
    """The rule breaks a lifecycle check found: the first one that counts is raised.

    A rule relating two hooks presupposes both in the stream; ``needs`` names the event
    types it presupposes, and a break counts only if all of them occurred (known at the
    stream's end). Per set of ``needs`` the earliest break is kept.
    """

    __slots__ = ("found", "index")

    def __init__(self) -> None:
        self.index = 0
        """The position in the stream of the event being checked."""
        self.found: dict[frozenset[type[BaseEvent]], tuple[int, BaseEvent, str]] = {}

    def flag(
        self, event: BaseEvent, rule: str, *needs: type[BaseEvent], at: int | None = None
    ) -> None:
        """Note that ``event`` breaks ``rule`` (at the current position, unless ``at``)."""
        key = frozenset(needs)
        where = self.index if at is None else at
        first = self.found.get(key)
        if first is None or where < first[0]:
            self.found[key] = (where, event, rule)

    def first(self, present: Collection[type[BaseEvent]]) -> tuple[BaseEvent, str] | None:
        """Return the earliest break whose presupposed event types are all ``present``."""
        counted = [found for needs, found in self.found.items() if needs <= set(present)]
        if not counted:
            return None
        _, event, rule = min(counted, key=lambda found: found[0])
        return event, rule


class LifecycleRules(Protocol):
    """One lifecycle check's state for some event types: the rules their events keep.

    The kernel checks what every event keeps (``seq`` counting each source's events
    without gaps); these rules check the rest, through ``violations.flag``.
    """

    def restarts(self, event: BaseEvent) -> bool:
        """Return whether ``event`` begins a new life of its source (numbering anew).

        Called before ``check``, for every event of the rules' types.
        """
        ...

    def check(self, event: BaseEvent, violations: Violations) -> None:
        """Check ``event`` against what came before it."""
        ...

    def finish(self, violations: Violations, allow_open: bool) -> Mapping[str, int]:
        """Check the stream's end; return counts for the summary (``LifecycleSummary``
        fields, e.g. ``episodes``)."""
        ...


class EventRules(Protocol):
    """What the entry-point group ``hookbus.rules`` names: rules for some event types."""

    types: Collection[type[BaseEvent]]
    """The event types these rules are about (the others are not passed to them)."""

    def replay_rules(self, metrics_logger: MetricsLogger, max_open: int) -> ReplayRules:
        """Return fresh replay state; ``max_open`` bounds what stays open (episodes).

        Rules that also declare a keyword ``settings`` get the replay's ``ReplaySettings``
        (whose recording it is, the ``merge`` asked for).
        """
        ...

    def lifecycle_rules(self) -> LifecycleRules:
        """Return fresh lifecycle-check state."""
        ...


class _Loaded(NamedTuple):
    rules: tuple[EventRules, ...]
    by_type: dict[type[BaseEvent], int]  # an event type -> the index of its rules
    settings: tuple[bool, ...]  # per rules: whether replay_rules takes settings=


_lock = threading.Lock()
_loaded: list[_Loaded] = []


def installed_rules() -> tuple[tuple[EventRules, ...], dict[type[BaseEvent], int]]:
    """Return the installed rules (loaded once) and, per event type, which of them holds it.

    Entry points load in name order; where two claim one event type, the first keeps it.
    """
    if not _loaded:
        with _lock:
            if not _loaded:
                from importlib.metadata import entry_points  # ~20 ms: only when asked

                _loaded.append(_load(sorted(entry_points(group=RULES_GROUP), key=_name)))
    return _loaded[0].rules, _loaded[0].by_type


def _name(point: Any) -> str:
    return str(point.name)


def _load(points: list[Any]) -> _Loaded:
    rules: list[EventRules] = []
    by_type: dict[type[BaseEvent], int] = {}
    for point in points:
        try:
            found = point.load()
        except Exception as exc:
            raise ConfigError(
                f"cannot load the event rules {point.value!r} (entry point {point.name!r} of "
                f"group {RULES_GROUP!r}): {exc}"
            ) from exc
        for cls in found.types:
            by_type.setdefault(cls, len(rules))
        rules.append(found)
    settings = tuple(_takes_settings(r) for r in rules)
    return _Loaded(tuple(rules), by_type, settings)


def _takes_settings(rules: EventRules) -> bool:
    # Decided once, when the rules load: older rules take two arguments only.
    try:
        parameters = inspect.signature(rules.replay_rules).parameters
    except (TypeError, ValueError):  # pragma: no cover - a builtin without a signature
        return False
    return "settings" in parameters


def rules_for(
    make: Callable[[EventRules], Any],
) -> dict[type[BaseEvent], Any]:
    """Make one state per installed rules with ``make``; return it per event type."""
    rules, by_type = installed_rules()
    states = [make(r) for r in rules]
    return {cls: states[i] for cls, i in by_type.items()}


def replay_states(
    metrics_logger: MetricsLogger, max_open: int, settings: ReplaySettings
) -> dict[type[BaseEvent], ReplayRules]:
    """Make one replay state per installed rules (``settings`` to those that take it);
    return it per event type."""
    installed_rules()
    takes = _loaded[0].settings
    states: list[ReplayRules] = []
    for rules, given in zip(_loaded[0].rules, takes, strict=True):
        if given:
            states.append(rules.replay_rules(metrics_logger, max_open, settings=settings))  # type: ignore[call-arg]
        else:
            states.append(rules.replay_rules(metrics_logger, max_open))
    return {cls: states[i] for cls, i in _loaded[0].by_type.items()}
