"""What a recording's gap (``RecordingGap``) says, to ``check_lifecycle`` and replay alike.

A bridge writes one where a runner was lost before its events were taken (docs/bridges.md):
the file then holds less than the run did, and whatever is computed from it misses those
events. ``check_lifecycle`` counts a gap as a break; a replay publishes it (handlers of
``on_recording_gap`` get it) and warns, once per gap, so that a test fails loudly under
``filterwarnings = error`` instead of passing on half a run.
"""

from __future__ import annotations

import warnings

from hookbus.events import RecordingGap
from hookbus.kernel import HookbusWarning

__all__ = ("describe_gap", "warn_replayed_gap")


def describe_gap(event: RecordingGap) -> str:
    """Say what ``event`` marks: whose events, from which seq, when noticed, and why."""
    return (
        f"the recording lost {event.lost_source}'s events from seq {event.first_lost_seq} on "
        f"(iteration {event.training_iteration}: {event.reason})"
    )


def warn_replayed_gap(event: RecordingGap) -> None:
    """Warn that a replay goes past ``event``: what it gives misses the lost events."""
    warnings.warn(
        f"{describe_gap(event)}; what this replay gives misses those events (a "
        f"RecordingGap event, seq {event.seq} of {event.source!r}, marks the place)",
        HookbusWarning,
        stacklevel=5,  # the caller of replay(), past _replay's frames
    )
