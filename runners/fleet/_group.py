"""EnvRunnerGroup: the local runner and the remote ones, sampled together."""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from hookbus.kernel import Bus, Control, Publisher

from .._deprecation import warn_deprecated
from .._loop import LoopThread, run_sync
from ..backends import EnvRunnerHandle, inline_handle, load_backend, share_loop
from ..env_runner import SampleRequest, env_runner_class
from ..episodes import Episode
from ._async_calls import AsyncCalls
from ._calls import RunnerCalls
from ._faults import collect, is_runner_failure, within
from ._health import RunnerHealth
from ._work import Waves, Work, spread as _spread

if TYPE_CHECKING:
    from ..config import AlgorithmConfig

__all__ = ("EnvRunnerGroup",)

T = TypeVar("T")

logger = logging.getLogger("hookbus")


class EnvRunnerGroup(RunnerCalls):
    """Hold ``local_env_runner`` (index 0) and ``num_env_runners`` remote runners (1..N).

    As in RLlib, the remote runners sample when there are any; otherwise the local one does.
    The remote runners are handles of the config's backend (``backends.BACKENDS``): tasks
    in this event loop (``"inline"``) or worker processes (``"process"``); the group uses
    only the contract (``backends/_base.py``).

    A remote runner whose worker died or hung, or whose env raised, is *failed* (``health``,
    a ``RunnerHealth``; ``_faults``): the group's methods leave it out until
    ``restore_env_runners()`` restarts it, as the config's fault-tolerance settings allow
    (``sample()`` restarts runners itself when none is left). Requests to several runners
    run each in its own task; one runner's failure never cancels another's request.
    ``publisher`` (the Algorithm's) announces restarts with ``on_env_runners_recreated``.

    ``foreach_env(fn)``, ``foreach_env_with_context(fn)`` and ``foreach_env_runner(fn)`` are
    sync, as in RLlib (a script, a sync callback); ``aforeach_env(fn)``, ... are their
    async twins for async code.
    """

    def __init__(
        self,
        config: AlgorithmConfig[Any],
        *,
        bus: Bus,
        module: Any = None,
        loop: LoopThread | None = None,
        publisher: Publisher | None = None,
    ) -> None:
        self.config = config
        self.local_env_runner = env_runner_class(config)(
            config, bus=bus, module=module, worker_index=0
        )
        """The local EnvRunner (it samples when there are no remote runners)."""
        self._local = inline_handle(self.local_env_runner)
        make = load_backend(config.backend)
        self.remote_env_runners: list[EnvRunnerHandle] = [
            make(config, bus=bus, worker_index=index, module=module)
            for index in range(1, config.num_env_runners + 1)
        ]
        """The remote runners' handles (``backends/_base.py``), worker index 1..N."""
        self.health = RunnerHealth(config, self.remote_env_runners, publisher=publisher, group=self)
        """Failing, counting and restarting the remote runners (``config.fault_tolerance()``)."""
        self.loop = loop
        """The event loop thread that sync calls go to (None: the caller's loop)."""
        self._async_calls = AsyncCalls(loop, config.max_requests_in_flight_per_env_runner)
        self.local_env_runner.loop = loop
        for runner in self.remote_env_runners:
            share_loop(runner, loop)

    @property
    def sampling_runners(self) -> Sequence[EnvRunnerHandle]:
        """The runners that sample: the remote ones in service, or the local one alone.

        As in RLlib, the local runner samples only when there are no remote runners; when
        every remote runner failed, none samples until some are restarted. A remote runner
        whose worker died unnoticed is still in service: its next request finds out, and the
        failure is handled as the fault-tolerance settings say.
        """
        if not self.remote_env_runners:
            return [self._local]
        return self.health.in_service(self.remote_env_runners)

    # --- health, RLlib's names (``health`` does the work) ----------------------------------

    @property
    def healthy_remote_runners(self) -> list[EnvRunnerHandle]:
        """The remote runners that have not failed and whose worker is there."""
        return self.health.healthy_remote_runners

    def healthy_env_runner_ids(self) -> list[int]:
        """Return the worker indices of the healthy remote runners."""
        return self.health.healthy_env_runner_ids()

    def num_healthy_remote_workers(self) -> int:
        """Return how many remote runners are healthy."""
        return self.health.num_healthy_remote_workers()

    def num_healthy_remote_env_runners(self) -> int:
        """Return how many remote runners are healthy (RLlib's name)."""
        return self.health.num_healthy_remote_workers()

    def probe_unhealthy_env_runners(self, timeout_seconds: float | None = None) -> list[int]:
        """Bring failed remote runners back; return their worker indices (RLlib's name).

        RLlib pings its failed actors (which Ray restarted) and takes back those that answer
        within ``timeout_seconds`` (default ``env_runner_health_probe_timeout_s``). hookbus
        ends a failed runner's worker, so it restarts it instead, with the current weights,
        as ``restore_env_runners()`` may (restarts on, their delay passed, not used up); a
        restarted runner must answer within ``timeout_seconds``. No hook is published.
        """
        return run_sync(
            self.loop,
            "env_runner_group.aprobe_unhealthy_env_runners()",
            self.aprobe_unhealthy_env_runners,
            timeout_seconds,
            may_wait=any(not r.in_process for r in self.remote_env_runners),
        )

    async def aprobe_unhealthy_env_runners(self, timeout_seconds: float | None = None) -> list[int]:
        """Async twin of ``probe_unhealthy_env_runners()``."""
        return await self.health.restore_env_runners(
            self.current_weights(), probe_timeout_s=timeout_seconds
        )

    def num_remote_worker_restarts(self) -> int:
        """Return how many restarts of failed remote runners were tried in all."""
        return self.health.num_remote_worker_restarts()

    async def restore_env_runners(self, weights: dict[str, Any]) -> list[int]:
        """Restart the failed runners the fault-tolerance settings allow; return their indices."""
        return await self.health.restore_env_runners(weights)

    async def restore_and_announce(self, weights: dict[str, Any]) -> list[int]:
        """Restart what ``restore_env_runners()`` may; publish ``on_env_runners_recreated``."""
        return await self.health.restore_and_announce(weights)

    @property
    def num_env_runners(self) -> int:
        """How many remote runners there are."""
        return len(self.remote_env_runners)

    def num_remote_env_runners(self) -> int:
        """Return how many remote runners there are (RLlib's name)."""
        return len(self.remote_env_runners)

    # --- RLlib 2.40's deprecated names: they work and warn -----------------------------------

    def healthy_worker_ids(self) -> list[int]:
        """Deprecated in RLlib: ``healthy_env_runner_ids()``."""
        warn_deprecated(
            "EnvRunnerGroup.healthy_worker_ids", "EnvRunnerGroup.healthy_env_runner_ids"
        )
        return self.healthy_env_runner_ids()

    def num_remote_workers(self) -> int:
        """Deprecated in RLlib: ``num_remote_env_runners()``."""
        warn_deprecated(
            "EnvRunnerGroup.num_remote_workers", "EnvRunnerGroup.num_remote_env_runners"
        )
        return self.num_remote_env_runners()

    async def _settle(
        self, runners: Sequence[EnvRunnerHandle], outcomes: Sequence[T | Exception]
    ) -> list[tuple[EnvRunnerHandle, T]]:
        """Handle the failures among ``outcomes``; return the runners' results that came.

        Failed remote runners are taken out of service; an error that is no runner failure
        (a handler's), a failure the settings do not tolerate, or the local runner's error
        is raised once every outcome was handled (the first, the others in a note).
        """
        results = [
            (runner, outcome)
            for runner, outcome in zip(runners, outcomes, strict=True)
            if not isinstance(outcome, Exception)
        ]
        errors: list[Exception] = []
        for runner, outcome in zip(runners, outcomes, strict=True):
            if not isinstance(outcome, Exception):
                continue
            if runner is self._local or not is_runner_failure(outcome):
                errors.append(outcome)
            elif not await self.health.fail(runner, outcome):
                errors.append(outcome)
        if errors:
            first, *others = errors
            if others:
                first.add_note(
                    f"hookbus: {len(others)} more failed as well: "
                    + "; ".join(f"{type(exc).__name__}: {exc}" for exc in others)
                )
            raise first
        return results

    def set_module(self, module: Any) -> None:
        """Give every runner without a module the learner's ``module``.

        In-process runners share it; worker processes get a copy when they start.
        """
        for runner in [self._local, *self.remote_env_runners]:
            if runner.module is None:
                runner.module = module

    def take_control(self) -> Control | None:
        """Return what every runner's handlers asked for (``Control``) since last time.

        In-process runners and remote ones alike: a remote handle keeps the Controls its
        replies brought, a failed runner's included (docs/control.md).
        """
        runners = [self._local, *self.remote_env_runners]
        return Control.combine(*(runner.take_control() for runner in runners))

    def handler_errors(self) -> int:
        """Return the handler exceptions counted on the remote runners' own buses."""
        return sum(runner.handler_errors for runner in self.remote_env_runners)

    async def setup(self) -> None:
        """Start the remote runners (in parallel); announce every env (on_environment_created).

        A remote runner that fails while starting (its worker killed or lost) is a failed
        runner like one that fails later: taken out of service and restarted as the
        fault-tolerance settings say, while the others start undisturbed; without restarts
        (nor ``ignore_env_runner_failures``) its failure is raised. Any other error (the
        env's constructor, a handler of ``on_environment_created``) is raised once every
        runner's start has ended.
        """
        await self._local.setup()
        runners = self.remote_env_runners
        await self._settle(runners, await collect([runner.setup for runner in runners]))

    async def sample(self, num_timesteps: int) -> list[Episode]:
        """Sample at least ``num_timesteps`` env steps, split evenly over the sampling runners.

        A remote runner that fails (``sample_timeout_s`` bounds each request) is taken out
        of service as the fault-tolerance settings say; what the others sampled is kept,
        and the runners left sample again until the env steps returned reach
        ``num_timesteps``, as RLlib's ``synchronous_parallel_sample`` does. When none is
        left, failed runners are restarted here and now (``spread()``), where RLlib
        ends the round short: the batch is full, or a ``RemoteError`` says which runners
        failed and which setting keeps them out.
        """
        work = Work(
            ask=self._sample,
            took=self._took,
            shares=Waves(num_timesteps, _even_ceiling),
            runners=lambda: self.sampling_runners,
            what="sample {left} more of {total} env steps",
            timeout_s=self.config.sample_timeout_s,
            setting="sample_timeout_s",
        )
        return [episode for part in await _spread(self, work) for episode in part]

    def _took(self, runner: EnvRunnerHandle, share: int, part: list[Episode]) -> int:
        """Note the chunks ``runner`` handed out (its metrics count them later); count steps."""
        self.health.handed_out(runner.worker_index, part)
        return sum(map(len, part))

    async def spread(self, work: Work[T]) -> list[T]:
        """Do ``work`` on this group's runners (``_work``): training's and evaluation's way."""
        return await _spread(self, work)

    def current_weights(self) -> dict[str, Any]:
        """Return the weights a restarted runner gets: the local runner's module's.

        That module is the learner's (the Algorithm's group) or the round's copy (the
        evaluation group), which the group's remote runners were last given.
        """
        weights: dict[str, Any] = self.local_env_runner.module.get_state()
        return weights

    async def _sample(
        self, runner: EnvRunnerHandle, share: int, first: bool = True
    ) -> list[Episode]:
        # ``first`` changes nothing: training's episodes go on from one request to the next.
        timeout = self.config.sample_timeout_s
        what = f"sample {share} env steps"
        if self.config.batch_mode != "complete_episodes":
            call = functools.partial(runner.sample, SampleRequest(num_timesteps=share))
            return await within(runner, timeout, call, what=what, setting="sample_timeout_s")
        # RLlib's "complete_episodes": whole episodes from a reset, until the share of env
        # steps is reached, in one sample() call (one on_sample_end), as RLlib's runner.
        call = functools.partial(runner.sample, SampleRequest(complete_episodes_to=share))
        return await within(runner, timeout, call, what=what, setting="sample_timeout_s")

    async def get_metrics(self) -> list[dict[str, Any]]:
        """Return a metrics snapshot (``reduce()``) of every sampling runner that answers.

        Runners that failed after handing out episodes their metrics had not reported yet
        are counted by one more snapshot (``_tally``): env steps and episodes only, so that
        the counts merged from these snapshots are those of every episode ``sample()``
        returned.
        """
        runners = self.sampling_runners
        outcomes = await collect([r.get_metrics for r in runners])
        snapshots = []
        for runner, snapshot in await self._settle(runners, outcomes):
            self.health.counted(runner.worker_index)
            snapshots.append(snapshot)
        lost = self.health.lost_counts()
        return snapshots if lost is None else [*snapshots, lost]

    async def sync_weights(self, weights: dict[str, Any]) -> None:
        """Send the learner's weights to every healthy remote runner."""
        runners = self.health.healthy_remote_runners
        outcomes = await collect([functools.partial(r.set_weights, weights) for r in runners])
        await self._settle(runners, outcomes)

    async def astop(self) -> None:
        """Stop every runner (close envs, end worker processes), even if one fails."""
        runners = [self._local, *self.remote_env_runners]
        outcomes = await collect([r.stop for r in runners])
        errors = [outcome for outcome in outcomes if isinstance(outcome, Exception)]
        if errors:
            raise errors[0]


def _even_ceiling(left: int, k: int) -> list[int]:
    """Give each of ``k`` runners ``ceil(left / k)`` env steps (RLlib's even split)."""
    return [math.ceil(left / k)] * k
