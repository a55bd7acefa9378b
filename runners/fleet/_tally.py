"""What runners handed out that no metrics snapshot counted yet, and a dead runner's share.

A runner counts its env steps and episodes in its own metrics, which reach the Algorithm
with ``get_metrics()``, a request after the ``sample()`` requests whose episodes they count.
A runner that dies in between (or before the metrics of earlier rounds were asked for)
takes those counts with it, while its episodes went to the learner. The group therefore
tallies, per runner, what it handed out since the runner's last snapshot; when a runner
fails, its tally becomes a snapshot of its own (``lost_counts()``), merged with the
others', so that ``env_runners/num_env_steps_sampled``, ``num_episodes`` and their
lifetime sums count exactly what the learner got. Only those counts survive: the dead
runner's episode returns and lengths, and whatever its callbacks logged since its last
snapshot, are gone with it (docs/scaling.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hookbus.metrics import MetricsLogger

__all__ = ("Tally",)


class Tally:
    """Env steps and finished episodes handed out per runner since its last snapshot."""

    def __init__(self) -> None:
        self._open: dict[int, tuple[int, int]] = {}  # worker index -> (env steps, episodes)
        self._lost = (0, 0)  # of failed runners, not yet reported

    def handed_out(self, worker_index: int, episodes: Sequence[Any]) -> None:
        """Note that runner ``worker_index`` returned ``episodes`` (chunks) to the learner."""
        steps, done = self._open.get(worker_index, (0, 0))
        self._open[worker_index] = (
            steps + sum(map(len, episodes)),
            done + sum(chunk.is_done for chunk in episodes),
        )

    def counted(self, worker_index: int) -> None:
        """Note that the runner's metrics snapshot (which counts all it handed out) came in."""
        self._open.pop(worker_index, None)

    def lost(self, worker_index: int) -> None:
        """Note that the runner failed: what it handed out will never be in its metrics."""
        steps, done = self._open.pop(worker_index, (0, 0))
        self._lost = (self._lost[0] + steps, self._lost[1] + done)

    def lost_counts(self) -> dict[str, Any] | None:
        """Return a snapshot counting what failed runners handed out uncounted (and forget it).

        Its keys and settings are those ``EnvRunnerMetrics`` logs, so it merges with the
        runners' snapshots; None when nothing was lost.
        """
        steps, done = self._lost
        if not steps:
            return None
        self._lost = (0, 0)
        logger = MetricsLogger()
        log = logger.log_value
        log("num_env_steps_sampled", steps, reduce="sum", clear_on_reduce=True)
        log("num_env_steps_sampled_lifetime", steps, reduce="lifetime_sum")
        log("num_episodes", done, reduce="sum", clear_on_reduce=True)
        log("num_episodes_lifetime", done, reduce="lifetime_sum")
        return logger.reduce()
