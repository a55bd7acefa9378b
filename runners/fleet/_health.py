"""Runner health: failing, counting and restarting remote runners (``fault_tolerance``).

``EnvRunnerGroup.health``, a collaborator of the group: the group samples, this decides
what a runner's failure means and brings failed runners back, as
``config.fault_tolerance()`` says (``_faults`` says what counts as a failure).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, final

import anyio

from hookbus.events import EnvRunnersRecreated
from hookbus.kernel import Publisher

from ..backends import EnvRunnerHandle, RemoteError
from ._faults import gather, within
from ._repeats import SAME_FAILURES_TO_STOP, Repeats, warn_tolerated
from ._tally import Tally

if TYPE_CHECKING:
    from ..config import AlgorithmConfig

__all__ = ("RunnerHealth",)

logger = logging.getLogger("hookbus")


@final
class RunnerHealth:
    """Track a group's failed remote runners and restart them; RLlib's health counts.

    ``remote_env_runners`` is the group's list of handles (worker index ``i`` at ``i - 1``),
    restarted in place; ``publisher`` (the Algorithm's) announces restarts with
    ``on_env_runners_recreated``, whose ``env_runner_group`` argument is ``group``.
    """

    def __init__(
        self,
        config: AlgorithmConfig[Any],
        remote_env_runners: list[EnvRunnerHandle],
        *,
        publisher: Publisher | None,
        group: object,
    ) -> None:
        self.config = config
        self.remote_env_runners = remote_env_runners
        self._group = group
        self._publisher = publisher  # announces restarts (None: they go unannounced)
        self._failed: dict[int, float] = {}  # worker index -> when it failed (monotonic)
        self._restarts: dict[int, int] = {}  # worker index -> restarts tried
        # Runner failures (restarts that failed included) since a runner last returned a
        # sample: num_consecutive_env_runner_failures_tolerance bounds it.
        self._failures_in_a_row = 0
        self._tally = Tally()  # what runners handed out that their metrics do not count yet
        self._last_failure: BaseException | None = None  # the latest runner failure
        self._repeats = Repeats(config.max_num_env_runner_restarts)  # failures alike

    @property
    def healthy_remote_runners(self) -> list[EnvRunnerHandle]:
        """The remote runners that have not failed and whose worker is there."""
        return [
            r for r in self.remote_env_runners if r.worker_index not in self._failed and r.healthy
        ]

    # --- health (RLlib's names) -------------------------------------------------------------

    def healthy_env_runner_ids(self) -> list[int]:
        """Return the worker indices of the healthy remote runners."""
        return [r.worker_index for r in self.healthy_remote_runners]

    def num_healthy_remote_workers(self) -> int:
        """Return how many remote runners are healthy."""
        return len(self.healthy_remote_runners)

    def num_remote_worker_restarts(self) -> int:
        """Return how many restarts of failed remote runners were tried in all."""
        return sum(self._restarts.values())

    def mark_failed(self, worker_index: int) -> None:
        """Take remote runner ``worker_index`` out of service (its worker is gone).

        What it handed out that its metrics did not count yet is counted apart (``_tally``).
        """
        self._failed.setdefault(worker_index, time.monotonic())
        self._tally.lost(worker_index)

    def in_service(self, runners: Sequence[EnvRunnerHandle]) -> list[EnvRunnerHandle]:
        """Return those of ``runners`` not taken out of service (their worker may be gone)."""
        return [r for r in runners if r.worker_index not in self._failed]

    def handed_out(self, worker_index: int, episodes: Sequence[Any]) -> None:
        """Note the episode chunks runner ``worker_index`` returned, uncounted by its metrics."""
        self._tally.handed_out(worker_index, episodes)

    def counted(self, worker_index: int) -> None:
        """Note that runner ``worker_index``'s metrics now count what it handed out."""
        self._tally.counted(worker_index)

    def lost_counts(self) -> dict[str, Any] | None:
        """Return (and forget) a snapshot of what failed runners handed out uncounted."""
        return self._tally.lost_counts()

    def sampled(self) -> None:
        """Note that a runner returned a sample: runner failures are no longer in a row."""
        self._failures_in_a_row = 0

    async def fail(self, runner: EnvRunnerHandle, exc: BaseException) -> bool:
        """Take ``runner`` out of service for ``exc``, a runner failure; end its worker.

        Return whether the settings tolerate it (``restart_failed_env_runners`` or
        ``ignore_env_runner_failures``, and at most
        ``num_consecutive_env_runner_failures_tolerance`` failures in a row) and it is not
        the runner's ``SAME_FAILURES_TO_STOP``th failure alike in a row (``_repeats``); if
        not, ``exc`` gets a note saying why, for the caller to raise.
        """
        self.mark_failed(runner.worker_index)
        self._last_failure = exc
        await runner.kill()
        config = self.config
        if config.restart_failed_env_runners or config.ignore_env_runner_failures:
            alike = self._repeats.count(runner, exc)
            if alike >= SAME_FAILURES_TO_STOP or not self._tolerate_one_more(exc):
                return False
            warn_tolerated(f"{runner.where} failed", exc, alike, then="going on without it")
            return True
        exc.add_note(
            f"hookbus: env runner {runner.worker_index} failed; "
            f"config.fault_tolerance(restart_failed_env_runners=True) would have restarted "
            f"it (ignore_env_runner_failures=True: go on without it)"
        )
        return False

    def _tolerate_one_more(self, exc: BaseException) -> bool:
        """Count one more runner failure in a row; if too many, note so on ``exc``."""
        self._failures_in_a_row += 1
        tolerance = self.config.num_consecutive_env_runner_failures_tolerance
        if self._failures_in_a_row <= tolerance:
            return True
        exc.add_note(
            f"hookbus: {self._failures_in_a_row} env runner failures in a row, with no sample "
            f"returned in between, exceed "
            f"config.fault_tolerance(num_consecutive_env_runner_failures_tolerance={tolerance})"
        )
        return False

    def mark_lost(self, runners: Sequence[EnvRunnerHandle]) -> None:
        """Mark failed those of ``runners`` whose worker was lost (a timeout ended it, say)."""
        for runner in runners:
            if not runner.healthy:
                self.mark_failed(runner.worker_index)

    async def restore_env_runners(
        self, weights: dict[str, Any], *, probe_timeout_s: float | None = None
    ) -> list[int]:
        """Restart the failed runners the fault-tolerance settings allow; return their indices.

        A runner is restarted once ``delay_between_env_runner_restarts_s`` have passed since
        it failed, at most ``max_num_env_runner_restarts`` times, and only with
        ``restart_failed_env_runners``; it comes back with ``weights``. A restart that fails
        counts as one and leaves the runner failed (a failure like the others: too many in
        a row, or alike in a row, are raised). ``probe_timeout_s`` replaces
        ``env_runner_health_probe_timeout_s`` for these restarts.
        """
        config = self.config
        if not config.restart_failed_env_runners:
            return []
        self.mark_lost(self.remote_env_runners)  # workers that died between requests
        if not self._failed:
            return []
        now = time.monotonic()
        due = [
            index
            for index, failed_at in self._failed.items()
            if now - failed_at >= config.delay_between_env_runner_restarts_s
            and self._restarts.get(index, 0) < config.max_num_env_runner_restarts
        ]
        if not due:
            return []
        restart = functools.partial(self._restart, weights=weights, probe_timeout_s=probe_timeout_s)
        restarted = await gather([functools.partial(restart, i) for i in due])
        return [index for index, ok in zip(due, restarted, strict=True) if ok]

    async def restore_and_announce(self, weights: dict[str, Any]) -> list[int]:
        """Restart what ``restore_env_runners()`` may; publish ``on_env_runners_recreated``.

        It is published with the publisher the group was given (the Algorithm's), with
        ``is_evaluation`` from the config.
        """
        restored = await self.restore_env_runners(weights)
        publisher = self._publisher
        if restored and publisher is not None:
            is_evaluation = bool(self.config.in_evaluation)
            await publisher.publish(
                EnvRunnersRecreated,
                {
                    "env_runner_group": self._group,
                    "env_runner_indices": restored,
                    "is_evaluation": is_evaluation,
                },
                env_runner_indices=restored,
                is_evaluation=is_evaluation,
            )
        return restored

    async def revive(
        self,
        weights: dict[str, Any],
        *,
        what: str,
        since: float,
        limit_s: float | None,
        setting: str,
    ) -> None:
        """Restart failed runners now: none is left, and ``what`` is still to be done.

        As ``restore_and_announce()``, but in the middle of a request to the group: a runner
        whose ``delay_between_env_runner_restarts_s`` has not passed yet is waited for, if
        it may restart before ``limit_s`` seconds from ``since`` (when the group found no
        runner left) are over. Raise ``RemoteError`` naming the failed runners and the
        setting that stops them instead: restarts off, restarts used up, or too late for
        ``setting`` (``limit_s``). A restart that fails counts as usual (and the caller,
        still without runners, calls again).
        """
        config = self.config
        self.mark_lost(self.remote_env_runners)  # workers that died unnoticed: failed too
        failed = sorted(self._failed)
        names = ", ".join(map(str, failed))
        lead = f"no env runner left to {what}: env runners {names} failed"
        last = self._last_failure  # the cause shown under the error
        if not config.restart_failed_env_runners:
            raise RemoteError(
                f"{lead}; config.fault_tolerance(restart_failed_env_runners=False) restarts none"
            ) from last
        most = config.max_num_env_runner_restarts
        left = [i for i in failed if self._restarts.get(i, 0) < most]
        if not left:
            raise RemoteError(
                f"{lead}; each was restarted max_num_env_runner_restarts={most} times"
            ) from last
        delay = config.delay_between_env_runner_restarts_s
        due = max(time.monotonic(), min(self._failed[i] for i in left) + delay)
        if limit_s is not None and due > since + limit_s:
            raise RemoteError(
                f"{lead}; none may restart within {setting}={limit_s} "
                f"(delay_between_env_runner_restarts_s={delay})"
            ) from last
        logger.warning("hookbus: %s; restarting them now", lead)
        await anyio.sleep(max(0.0, due - time.monotonic()))
        await self.restore_and_announce(weights)

    async def _restart(
        self, worker_index: int, weights: dict[str, Any], probe_timeout_s: float | None = None
    ) -> bool:
        runner = self.remote_env_runners[worker_index - 1]
        self._restarts[worker_index] = self._restarts.get(worker_index, 0) + 1
        config = self.config
        try:
            await runner.kill()  # make sure the old worker is gone
            # RLlib's health probe: a restarted runner must answer in time to count as back.
            await within(
                runner,
                config.env_runner_health_probe_timeout_s
                if probe_timeout_s is None
                else probe_timeout_s,
                runner.setup,
                what="start",
                setting="env_runner_health_probe_timeout_s",
            )
            # RLlib's restore: the restarted runner gets the current state in time, or it
            # would sample with weights it never got.
            await within(
                runner,
                config.env_runner_restore_timeout_s,
                functools.partial(runner.set_weights, weights),
                what="load the learner's weights",
                setting="env_runner_restore_timeout_s",
            )
        except Exception as exc:  # a restart that fails is one more failure, not fatal...
            await runner.kill()
            self._failed[worker_index] = time.monotonic()
            self._last_failure = exc
            alike = self._repeats.count(runner, exc)
            # ... unless it failed the same way too often, or too many failed in a row
            if alike >= SAME_FAILURES_TO_STOP or not self._tolerate_one_more(exc):
                raise
            warn_tolerated(f"restarting {runner.where} failed", exc, alike)
            return False
        del self._failed[worker_index]
        if not self._failed:
            # No failure left to explain: let the last one go. Its traceback holds the
            # frames it was raised in, and an in-process runner's frames hold that runner.
            self._last_failure = None
        return True
