"""The hooks' event rules, as the kernel's ``replay`` and ``check_lifecycle`` load them.

pyproject.toml names ``RULES`` in the entry-point group ``hookbus.rules``: the kernel knows
no hook's meaning, and learns it here the way it learns a package's own event types'.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hookbus.events import HOOKS, BaseEvent
from hookbus.kernel import ReplaySettings
from hookbus.metrics import MetricsLogger

from ._replay import HookReplay
from ._replay_cycles import cycle_for

if TYPE_CHECKING:
    from ._lifecycle import HookRules

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
        """Return a lifecycle check's state (its modules load at the first check: a bridge
        or a replay never needs them)."""
        from ._lifecycle import HookRules

        return HookRules()


RULES = EpisodeRules()
"""The object the entry point names."""
