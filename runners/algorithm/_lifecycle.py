"""Where an Algorithm is in its life: built, set up (ready), stopped."""

from __future__ import annotations

import enum

__all__ = ("Lifecycle",)


class Lifecycle(enum.Enum):
    """An Algorithm's state; it only moves forward: built -> ready -> stopped (or built -> stopped).

    The values are the words error messages use (``the Algorithm is stopped``).
    """

    BUILT = "built"
    """Constructed; nothing started yet (inside an event loop, ``async with`` sets it up)."""
    READY = "ready"
    """Set up: runners started, the learner built, ``on_algorithm_init`` published."""
    STOPPED = "stopped"
    """Stopped: runners and workers ended; nothing serves any more."""

    def __str__(self) -> str:
        return self.value
