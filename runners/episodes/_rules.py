"""The hooks' event rules, as the kernel's ``replay`` and ``check_lifecycle`` load them.

pyproject.toml names ``RULES`` in the entry-point group ``hookbus.rules``: the kernel knows
no hook's meaning, and learns it here the way it learns a package's own event types'.
"""

from __future__ import annotations

from hookbus.events import HOOKS, BaseEvent
from hookbus.metrics import MetricsLogger

from ._lifecycle import HookRules
from ._replay import HookReplay

__all__ = ("RULES", "EpisodeRules")


class EpisodeRules:
    """Rebuild the hooks' live arguments on replay; check the hooks' lifecycle."""

    types: tuple[type[BaseEvent], ...] = tuple(HOOKS.values())

    def replay_rules(self, metrics_logger: MetricsLogger, max_open: int) -> HookReplay:
        """Return a replay's state: episodes (at most ``max_open`` unfinished), loggers."""
        return HookReplay(metrics_logger, max_open)

    def lifecycle_rules(self) -> HookRules:
        """Return a lifecycle check's state."""
        return HookRules()


RULES = EpisodeRules()
"""The object the entry point names."""
