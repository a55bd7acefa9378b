"""Evaluation during training: RLlib's evaluation rounds, on runners of their own.

An Algorithm whose config evaluates gets an ``Evaluation``: a second EnvRunnerGroup built
from ``config.get_evaluation_config_object()`` (``in_evaluation=True``, the
``evaluation_config`` overrides applied), with its own copy of the module. Each round syncs
the learner's weights into it, publishes ``on_evaluate_start``, samples the budget (or runs
``custom_evaluation_function``), merges the runners' metrics under
``evaluation/env_runners``, and publishes ``on_evaluate_end`` with the dict that becomes
``result["evaluation"]``. docs/evaluation.md describes the settings and guarantees.
"""

from __future__ import annotations

import copy
import functools
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import anyio

from hookbus.events import EvaluateEnd, EvaluateStart
from hookbus.kernel import Publisher
from hookbus.metrics import MetricsLogger, results

from .._loop import LoopThread
from .._rl_module import Stateful
from ..backends import EnvRunnerHandle
from ..env_runner import SampleRequest, SampleSummary
from ..fleet import EnvRunnerGroup, Units, Until, Waves, Work, gather, within
from ._evaluation_budget import auto_steps, split, units
from ._learner import AnyLearner

if TYPE_CHECKING:
    from ..config import AlgorithmConfig

__all__ = ("EVALUATION_KEY", "Evaluation")

EVALUATION_KEY = "evaluation"
_RUNNER_STATS = (EVALUATION_KEY, "env_runners")

logger = logging.getLogger("hookbus")


class Evaluation:
    """Run an Algorithm's evaluation rounds on an evaluation EnvRunnerGroup.

    ``setup()`` builds the group; ``evaluate()`` runs one round (``algo.evaluate()`` and the
    rounds ``train()`` starts); ``train_and_evaluate()`` runs a round in parallel with a
    training step, on the weights from before that step (RLlib's one-iteration lag).

    Handed what it uses of the Algorithm: its config, logger and publisher (its bus, its
    events, its seq), its learner and iteration count as they are at each call, and the
    Algorithm itself only to hand on to ``custom_evaluation_function(algorithm, group)``,
    as RLlib calls it.
    """

    def __init__(
        self,
        config: AlgorithmConfig[Any],
        metrics: MetricsLogger,
        publisher: Publisher,
        *,
        learner: Callable[[], AnyLearner],
        iteration: Callable[[], int],
        algorithm: object,
        loop: LoopThread | None = None,
    ) -> None:
        self._interval = config.evaluation_interval
        self._metrics = metrics
        self._publisher = publisher
        self._learner = learner
        self._iteration = iteration
        self._algorithm = algorithm  # only for the custom function: nothing here reads it
        self._loop = loop
        self.config = config.get_evaluation_config_object()
        """The evaluation runners' config (``in_evaluation=True``, overrides applied)."""
        self.group: EnvRunnerGroup | None = None
        self.last: dict[str, Any] | None = None
        """The latest round's metrics: ``result["evaluation"]`` of later iterations too."""
        self._module: Stateful | None = None  # the in-process evaluation runners' module copy
        self._throughput: float | None = None  # env steps per second of one runner ("auto")
        self._custom = config.custom_evaluation_function

    @property
    def module(self) -> Any:
        """The evaluation runners' own module copy (None before ``setup()``)."""
        return self._module

    # --- lifecycle --------------------------------------------------------------------------

    async def setup(self) -> None:
        """Build the evaluation runners (worker processes start here), with a module copy."""
        # Their own copy: a round running parallel to training must not see the weights
        # change under it while the learner updates (in a worker thread).
        self._module = module = copy.deepcopy(self._learner().module)
        self.group = EnvRunnerGroup(
            self.config, bus=self._publisher.bus, loop=self._loop, publisher=self._publisher
        )
        self.group.set_module(module)
        await self.group.setup()

    async def astop(self) -> None:
        """Stop the evaluation runners."""
        if self.group is not None:
            await self.group.astop()

    def due(self, iteration: int) -> bool:
        """Tell whether training iteration ``iteration`` (1-based) ends with a round."""
        interval = self._interval
        return interval is not None and interval > 0 and iteration % interval == 0

    # --- rounds -----------------------------------------------------------------------------

    async def train_and_evaluate(self, training_step: Callable[[], Awaitable[None]]) -> None:
        """Run ``training_step()`` and a round at the same time: train(i->i+1) + eval(i)."""
        weights = self._learner().module.get_state()  # before the step changes them
        trained = anyio.Event()

        async def train() -> None:
            try:
                await training_step()
            finally:
                trained.set()

        async def evaluate() -> None:
            await self.evaluate(weights=weights, training=trained)

        await gather([train, evaluate])

    async def evaluate(
        self, *, weights: dict[str, Any] | None = None, training: anyio.Event | None = None
    ) -> dict[str, Any]:
        """Run one round on ``weights`` (the learner's now, by default); return its metrics.

        ``training`` is set when a parallel training step ends ("auto" duration stops then).
        """
        group, module = self.group, self._module
        assert group is not None, "setup() comes first"
        assert module is not None
        if weights is None:
            weights = self._learner().module.get_state()
        await group.restore_and_announce(weights)
        module.set_state(weights)
        await group.sync_weights(weights)
        await self._publisher.publish(EvaluateStart, training_iteration=self._iteration())
        metrics_logger = self._metrics
        # Each round reports its own episodes; lifetime counters go on counting.
        _forget_round_stats(metrics_logger)
        with metrics_logger.log_time(("timers", "evaluation_iteration")):
            if self._custom is not None:
                extra = await self._run_custom(group)
            else:
                extra = {}
                summaries = await self._sample(group, training)
                metrics_logger.aggregate([s.metrics for s in summaries], key=_RUNNER_STATS)
        metrics = results(metrics_logger, EVALUATION_KEY)
        metrics["num_healthy_workers"] = group.num_healthy_remote_workers()
        metrics["num_remote_worker_restarts"] = group.num_remote_worker_restarts()
        metrics.update(extra)
        # Handlers edit `metrics` in place: what they leave is what the result shows.
        await self._publisher.publish(
            EvaluateEnd,
            {"evaluation_metrics": metrics},
            training_iteration=self._iteration(),
            evaluation_metrics=metrics,
        )
        self.last = metrics
        return metrics

    async def _run_custom(self, group: EnvRunnerGroup) -> dict[str, Any]:
        function = self._custom
        assert function is not None
        if inspect.iscoroutinefunction(function):  # an async def (to await the group's methods)
            returned = await function(self._algorithm, group)
        else:
            # In a worker thread, as RLlib's sync functions expect: they call the group's
            # sync facades and runners' sync sample(), which block on this loop (free now).
            returned = await anyio.to_thread.run_sync(function, self._algorithm, group)
        return _custom_metrics(function, returned)

    # --- sampling the budget ----------------------------------------------------------------

    async def _sample(
        self, group: EnvRunnerGroup, training: anyio.Event | None
    ) -> list[SampleSummary]:
        """Sample the round's budget on the healthy runners (the local one if none remote).

        The group spreads it (``fleet.Work``): a failed runner's share goes to the others,
        and failed runners are restarted when none is left and a budget is owed.
        """

        def runners() -> Sequence[EnvRunnerHandle]:
            if group.remote_env_runners:
                return group.healthy_remote_runners
            return group.sampling_runners

        auto = self.config.evaluation_duration == "auto"
        if auto and not runners():
            logger.warning(
                "hookbus: no healthy evaluation env runner: this evaluation round sampled "
                "nothing (see config.fault_tolerance())"
            )
            return []
        work = self._auto(runners, training) if auto else self._budget(runners)
        try:
            return await group.spread(work)
        finally:
            group.health.mark_lost(group.remote_env_runners)  # workers a timeout ended

    def _budget(self, runners: Callable[[], Sequence[EnvRunnerHandle]]) -> Work[SampleSummary]:
        """Sample exactly ``evaluation_duration`` episodes or env steps.

        Synchronous (default): the budget is split evenly (the first ``budget % k`` runners
        do one more, as RLlib); a share whose runner failed is split again over the healthy
        runners once the others are done. Asynchronous: runners pull small units (one
        episode per sub-env) as they become free, and a failed unit goes back at once.
        """
        config = self.config
        budget = int(config.evaluation_duration)
        by_episodes = config.evaluation_duration_unit == "episodes"
        shares: Waves | Units = Waves(budget, split)
        if config.enable_async_evaluation:
            shares = Units(units(budget, max(1, len(runners())), config, by_episodes))

        async def ask(runner: EnvRunnerHandle, share: int, first: bool) -> SampleSummary:
            return await self._request(runner, share, by_episodes, first_of_round=first)

        return Work(
            ask=ask,
            took=lambda runner, share, summary: share,  # exact: a share is done in full
            shares=shares,
            runners=runners,
            what="evaluate {left} more of {total} " + ("episodes" if by_episodes else "env steps"),
            timeout_s=config.evaluation_sample_timeout_s,
            setting="evaluation_sample_timeout_s",
        )

    def _auto(
        self, runners: Callable[[], Sequence[EnvRunnerHandle]], training: anyio.Event | None
    ) -> Work[SampleSummary]:
        """Sample on every runner until the parallel training step ends (one unit at least).

        Units are sized, as RLlib sizes them, to fill the time the training step is expected
        to take still, clamped to the auto-duration bounds. Without a parallel training step
        (``algo.evaluate()``), it samples for about one training iteration's mean time.
        """
        config = self.config
        expected: float = self._metrics.peek(("timers", "training_iteration"), default=0.0)
        started = time.monotonic()

        def more() -> bool:
            if training is not None:
                return not training.is_set()
            return time.monotonic() - started < expected

        # In-process runners sample in this thread while the training step's learner runs
        # in a worker thread, and Python threads share one lock (the GIL): a sampling loop
        # holds it but for the 5 ms switch interval, and a learner that lets go of it at
        # every numpy call then barely moves (an iteration took 20 s to 340 s instead of
        # 1.5 s). So they take turns: each unit is followed by a pause as long as the unit
        # took, the runners one at a time, and the training step gets half the time at least.
        turns = anyio.Lock()

        async def unit(runner: EnvRunnerHandle, first: bool) -> SampleSummary:
            # Sized when it starts (after the runner's turn came): the time left, now.
            steps = auto_steps(expected - (time.monotonic() - started), self._throughput, config)
            began = time.monotonic()
            summary = await self._request(runner, steps, False, first_of_round=first)
            elapsed = time.monotonic() - began
            if elapsed > 0:
                self._throughput = summary.num_env_steps / elapsed
            if runner.in_process and training is not None and not training.is_set():
                await anyio.sleep(elapsed)  # the training step's turn
            return summary

        async def ask(runner: EnvRunnerHandle, unsized: int, first: bool) -> SampleSummary:
            if runner.in_process and training is not None:
                async with turns:
                    return await unit(runner, first)
            return await unit(runner, first)

        return Work(
            ask=ask,
            took=lambda runner, unsized, summary: summary.num_env_steps,
            shares=Until(more),
            runners=runners,
            what="",  # nothing is owed: no runner is restarted mid-round
            timeout_s=config.evaluation_sample_timeout_s,
            setting="evaluation_sample_timeout_s",
        )

    async def _request(
        self, runner: EnvRunnerHandle, share: int, by_episodes: bool, *, first_of_round: bool = True
    ) -> SampleSummary:
        """Ask ``runner`` for ``share`` episodes or env steps (its first request resets)."""
        config = self.config
        request = SampleRequest(
            num_episodes=share if by_episodes else None,
            num_timesteps=None if by_episodes else share,
            force_reset=first_of_round,
            exact=True,
        )
        unit = ("episode" if by_episodes else "env step") + ("s" if share != 1 else "")
        # An in-process runner steps in this thread: ``within`` sets it no timeout.
        summary: SampleSummary = await within(
            runner,
            config.evaluation_sample_timeout_s,
            functools.partial(runner.sample_and_get_metrics, request),
            what=f"sample {share} {unit}",
            setting="evaluation_sample_timeout_s",
        )
        return summary


def _forget_round_stats(metrics: MetricsLogger) -> None:
    """Delete the evaluation runner stats that describe one round; keep lifetime counts."""
    for path, stats in metrics.items():
        if path[:2] != _RUNNER_STATS:
            continue
        settings = stats.settings
        lifetime = settings["reduce"] == "lifetime_sum" or (
            settings["reduce"] == "sum" and not settings["clear_on_reduce"]
        )
        if not lifetime:
            metrics.delete(path)


def _custom_metrics(function: object, returned: object) -> dict[str, Any]:
    """Return the metrics a custom evaluation function returned: a dict, or RLlib's
    ``(metrics, env_steps, agent_steps)`` tuple. RLlib uses the two counts for its own
    bookkeeping only, not in the result; hookbus checks that they are counts and, as
    RLlib, reports the metrics alone."""
    if isinstance(returned, tuple) and len(returned) == 3:
        metrics, env_steps, agent_steps = returned
        if not (isinstance(env_steps, int) and isinstance(agent_steps, int)):
            raise TypeError(
                f"custom_evaluation_function {function!r} returned a tuple whose env_steps "
                f"and agent_steps are {env_steps!r} and {agent_steps!r}; expected two ints"
            )
        returned = metrics
    if not isinstance(returned, dict):
        raise TypeError(
            f"custom_evaluation_function {function!r} must return a dict of metrics or "
            f"RLlib's (metrics, env_steps, agent_steps) tuple, got {returned!r}"
        )
    return returned
