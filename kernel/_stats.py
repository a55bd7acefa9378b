"""Bus statistics: ``bus.statistics()``'s frozen snapshot of its counters."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ("BusStatistics",)


@dataclass(frozen=True, slots=True)
class BusStatistics:
    """A snapshot of a bus's counters."""

    subscribers: dict[str, int]
    """Handlers per hook (hooks with none left out)."""
    errors: int
    """Handler exceptions so far (logged, collected and quarantining ones included)."""
    errors_by_hook: dict[str, int]
    quarantined: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Per hook, the handlers ``on_error="quarantine"`` unsubscribed, in that order."""
