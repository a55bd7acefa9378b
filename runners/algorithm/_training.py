"""The Algorithm's training iterations and evaluation rounds: the ``atrain()`` and
``aevaluate()`` it delegates to, the result they publish and what runs after it
(``env_task_fn``)."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from hookbus.events import TrainResult
from hookbus.kernel import Control

from ..envs import EnvContext, TaskSettableEnv
from ._lifecycle import Lifecycle
from ._results import CONTROL_KEY, ResultDraft, assemble_result, callback_counts, control_entry

if TYPE_CHECKING:
    from hookbus.kernel import Bus, Publisher
    from hookbus.metrics import MetricsLogger

    from ..config import AlgorithmConfig
    from ._setup import Setup

__all__ = ("Trainer",)


class Trainer:
    """Run an Algorithm's training iterations and evaluation rounds; count its iterations.

    Handed the config, bus, logger and publisher, the ``Setup`` holding the runners and the
    learner, and ``training_step``: the Algorithm's step (its subclass's override).
    """

    def __init__(
        self,
        config: AlgorithmConfig[Any],
        bus: Bus,
        metrics: MetricsLogger,
        publisher: Publisher,
        setup: Setup,
        *,
        training_step: Callable[[], Awaitable[None]],
    ) -> None:
        self._config = config
        self._bus = bus
        self._metrics = metrics
        self._publisher = publisher
        self._setup = setup
        self._training_step = training_step
        self.iteration = 0
        """The training iterations done so far (``algo.training_iteration``)."""

    async def atrain(self) -> dict[str, Any]:
        """Run one training iteration and return its results (``Algorithm.atrain``)."""
        self._setup.require(Lifecycle.READY, "train")
        await self._restore_env_runners()
        evaluation = self._setup.evaluation
        if evaluation is None or not evaluation.due(self.iteration + 1):
            await self._timed_training_step()
        elif self._config.evaluation_parallel_to_training:
            await evaluation.train_and_evaluate(self._timed_training_step)
        else:
            await self._timed_training_step()
            await evaluation.evaluate()
        self.iteration += 1
        try:
            result = assemble_result(
                self._metrics,
                training_iteration=self.iteration,
                group=self._setup.ready_group(),
                evaluation=None if evaluation is None else evaluation.last,
                callbacks=self._callback_counts(),
            )
            # Requests made before on_train_result are in the result its handlers see;
            # theirs are added once they have run (or when a writer settles the draft).
            control = self._take_control()
            result[CONTROL_KEY] = control_entry(control)
            if self._publisher.wants(TrainResult):
                await self._publish_result(result, control)
            await self._apply_env_task_fn(result)
        finally:
            # Close the iteration even if a handler raised: per-iteration sums start again
            # at 0, so the next result counts only its own steps.
            self._metrics.reduce()
        return result

    async def aevaluate(self) -> dict[str, Any]:
        """Run one evaluation round, making the evaluation runners on the first call if the
        config did not ask for evaluation during training (``Algorithm.aevaluate``)."""
        self._setup.require(Lifecycle.READY, "evaluate")
        evaluation = self._setup.evaluation or await self._setup.start_evaluation()
        return await evaluation.evaluate()

    async def _publish_result(self, result: dict[str, Any], control: Control | None) -> None:
        """Publish ``on_train_result``; then bring what its handlers did into ``result``."""
        draft = ResultDraft(
            result,
            self._metrics,
            control,
            callbacks=self._callback_counts,
            take_control=self._take_control,
        )
        try:
            await self._publisher.publish(
                TrainResult,
                {"result": result, "draft": draft},
                training_iteration=self.iteration,
                result=result,
            )
            draft.settle()
        finally:
            draft.close()

    async def _restore_env_runners(self) -> None:
        """Restart failed training runners the settings allow; announce them (RLlib's way).

        As RLlib's ``restore_env_runners()`` before each training step: the restarted
        runners get the learner's current weights, then ``on_env_runners_recreated`` fires.
        """
        weights = self._setup.ready_learner().module.get_state()
        await self._setup.ready_group().restore_and_announce(weights)

    async def _timed_training_step(self) -> None:
        with self._metrics.log_time(("timers", "training_iteration")):
            await self._training_step()

    def _callback_counts(self) -> dict[str, int]:
        return callback_counts(self._bus, self._setup.runner_groups())

    def _take_control(self) -> Control | None:
        """Return every request handlers made since the last result (docs/control.md).

        ``on_train_result`` and ``on_evaluate_end`` (also of an ``evaluate()`` between two
        ``train()`` calls) through the Algorithm's publisher; ``on_sample_end``,
        ``on_episode_end`` and ``on_episode_step`` of every runner (in-process, worker
        process or Ray actor), training and evaluation.
        """
        return Control.combine(
            self._publisher.take_control(),
            *(group.take_control() for group in self._setup.runner_groups()),
        )

    async def _apply_env_task_fn(self, result: dict[str, Any]) -> None:
        fn = self._config.env_task_fn
        if fn is None:
            return
        # A partial of a module-level function, so that it pickles to worker processes.
        await self._setup.ready_group().aforeach_env_with_context(
            functools.partial(_set_task, fn, result)
        )


TaskFn = Callable[[dict[str, Any], TaskSettableEnv, EnvContext], Any]
"""``env_task_fn(train_results, task_settable_env, env_context) -> task`` (the task: any)."""


def _set_task(fn: TaskFn, result: dict[str, Any], env: object, env_context: EnvContext) -> None:
    if isinstance(env, TaskSettableEnv):
        env.set_task(fn(result, env, env_context))
