"""The hooks' event rules, as the kernel's ``replay`` and ``check_lifecycle`` load them.

pyproject.toml names ``RULES`` in the entry-point group ``hookbus.rules``: the kernel knows
no hook's meaning, and learns it here the way it learns a package's own event types'.
"""

from __future__ import annotations

from hookbus.events import HOOKS, BaseEvent
from hookbus.kernel import ReplaySettings
from hookbus.metrics import MetricsLogger

from ._lifecycle import HookRules
from ._replay import HookReplay
from ._replay_cycles import cycle_for

__all__ = ("RULES", "EpisodeRules")


class EpisodeRules:
    """Rebuild the hooks' live arguments on replay; check the hooks' lifecycle."""

    types: tuple[type[BaseEvent], ...] = tuple(HOOKS.values())

    def replay_rules(
        self,
        metrics_logger: MetricsLogger,
        max_open: int,
        settings: ReplaySettings = ReplaySettings(),  # noqa: B008  (an immutable tuple)
    ) -> HookReplay:
        """Return a replay's state: episodes (at most ``max_open`` unfinished), and the
        loggers of the reduce cycle ``settings`` choose (the recording's producer's)."""
        return HookReplay(metrics_logger, max_open, cycle_for(metrics_logger, settings))

    def lifecycle_rules(self) -> HookRules:
        """Return a lifecycle check's state."""
        return HookRules()


RULES = EpisodeRules()
"""The object the entry point names."""
