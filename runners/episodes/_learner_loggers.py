"""The learner hooks' ``metrics_logger``: one per module, merged under ``learners/<id>``.

As in RLlib, whose learner hooks log into the Learner's own ``metrics``, a handler of
``on_learner_update_start``/``_end`` gets a logger of that module's learner; after each
update what it holds is merged into the main logger under ``("learners", module_id)``,
beside the learner's own stats. The Algorithm (live) and ``replay`` (from a recording)
both use this class, so a replay reproduces the live run's metrics exactly.
"""

from __future__ import annotations

from hookbus.events import BaseEvent, LearnerUpdateEnd, LearnerUpdateStart
from hookbus.metrics import MetricsLogger

__all__ = ("LearnerLoggers",)


class LearnerLoggers:
    """Hand out each module's learner logger; merge it into ``into`` after each update."""

    __slots__ = ("_by_module", "into")

    def __init__(self, into: MetricsLogger) -> None:
        self.into = into
        self._by_module: dict[str, MetricsLogger] = {}

    def logger(self, module_id: str) -> MetricsLogger:
        """Return the learner logger of ``module_id`` (made on first use, kept after)."""
        found = self._by_module.get(module_id)
        if found is None:
            found = self._by_module[module_id] = MetricsLogger()
        return found

    def for_event(self, event: BaseEvent) -> MetricsLogger | None:
        """Return the logger a learner hook's event gets (None for any other event)."""
        if isinstance(event, LearnerUpdateStart | LearnerUpdateEnd):
            return self.logger(event.module_id)
        return None

    def update_done(self, module_id: str) -> None:
        """Merge what was logged for ``module_id`` during its update into ``into``."""
        logged = self.logger(module_id).reduce()
        if logged:
            self.into.aggregate([logged], key=("learners", module_id))
