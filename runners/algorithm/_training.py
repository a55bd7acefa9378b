"""The Algorithm's training iterations and evaluation rounds: ``atrain()`` and ``aevaluate()``,
their sync twins, the result they publish and what runs after it (``env_task_fn``)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from hookbus.events import TrainResult
from hookbus.kernel import Control

from .._loop import blocking as run_blocking
from ..envs import EnvContext, TaskSettableEnv
from ._lifecycle import Lifecycle
from ._results import CONTROL_KEY, ResultDraft, assemble_result, callback_counts, control_entry

if TYPE_CHECKING:
    from hookbus.kernel import Bus, Publisher
    from hookbus.metrics import MetricsLogger

    from ..config import AlgorithmConfig
    from ..fleet import EnvRunnerGroup
    from ._evaluation import Evaluation
    from ._facade import SyncFacade
    from ._learner import AnyLearner

__all__ = ("Training",)


class Training:
    """Run training iterations and evaluation rounds (a base of ``Algorithm``; it uses the
    names below)."""

    if TYPE_CHECKING:  # what the Algorithm provides
        config: AlgorithmConfig[Any]
        bus: Bus
        metrics: MetricsLogger
        _lifecycle: Lifecycle
        _publisher: Publisher
        _sync: SyncFacade
        _env_runner_group: EnvRunnerGroup | None
        _evaluation: Evaluation | None
        _tune_trial: bool
        training_iteration: int  # a property of the Algorithm's, with a setter

        @property
        def learner(self) -> AnyLearner: ...
        @property
        def env_runner_group(self) -> EnvRunnerGroup: ...
        @property
        def eval_env_runner_group(self) -> EnvRunnerGroup | None: ...
        def _require(self, lifecycle: Lifecycle, action: str) -> None: ...
        def _tune_call(self, name: str, *args: Any, **kwargs: Any) -> Any: ...
        async def _start_evaluation(self) -> Evaluation: ...

    # --- what subclasses provide ------------------------------------------------------------

    async def atraining_step(self) -> None:
        """Run one iteration: sample, update the learner, sync weights, log metrics.

        Log ``num_env_steps_sampled_lifetime`` (reduce "sum"), the runners' metrics under
        ``env_runners`` and the learner's under ``learners``, as PPO and DQN do.
        """
        raise NotImplementedError

    def training_step(self) -> None:
        """Run one iteration (sync, as RLlib's): the async ``atraining_step()``.

        An RLlib-style override ``def training_step(self): ... super().training_step()``
        runs as written: ``train()`` calls a sync override in a worker thread, from which
        this blocks on the Algorithm's loop (free meanwhile). An ``async def`` override is
        awaited on the loop instead.
        """
        run_blocking(self._sync.loop, "algorithm.atraining_step()", self.atraining_step)

    # --- one iteration, one round -----------------------------------------------------------

    async def atrain(self) -> dict[str, Any]:
        """Run one training iteration and return its results (a nested dict).

        Every ``evaluation_interval``-th iteration also runs an evaluation round: after the
        training step, or alongside it with ``evaluation_parallel_to_training``.
        ``result["control"]`` says what handlers asked the loop to do (stop, checkpoint,
        evaluate) and who asked: the Algorithm itself acts on none of it (docs/control.md).
        """
        self._require(Lifecycle.READY, "train")
        await self._restore_env_runners()
        evaluation = self._evaluation
        if evaluation is None or not evaluation.due(self.training_iteration + 1):
            await self._timed_training_step()
        elif self.config.evaluation_parallel_to_training:
            await evaluation.train_and_evaluate(self._timed_training_step)
        else:
            await self._timed_training_step()
            await evaluation.evaluate()
        self.training_iteration += 1
        try:
            result = assemble_result(
                self.metrics,
                training_iteration=self.training_iteration,
                group=self.env_runner_group,
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
            self.metrics.reduce()
        return result

    async def _publish_result(self, result: dict[str, Any], control: Control | None) -> None:
        """Publish ``on_train_result``; then bring what its handlers did into ``result``."""
        draft = ResultDraft(
            result,
            self.metrics,
            control,
            callbacks=self._callback_counts,
            take_control=self._take_control,
        )
        try:
            await self._publisher.publish(
                TrainResult,
                {"result": result, "draft": draft},
                training_iteration=self.training_iteration,
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
        await self.env_runner_group.restore_and_announce(self.learner.module.get_state())

    async def _timed_training_step(self) -> None:
        with self.metrics.log_time(("timers", "training_iteration")):
            step = self.training_step
            if inspect.iscoroutinefunction(step):  # an async override, awaited here
                await step()
            elif type(self).training_step is Training.training_step:
                await self.atraining_step()  # no sync override: no thread hop
            else:  # RLlib's sync override; it may call super().training_step()
                await anyio.to_thread.run_sync(step)

    async def aevaluate(self) -> dict[str, Any]:
        """Run one evaluation round and return its metrics (``result["evaluation"]``).

        Publishes ``on_evaluate_start`` and ``on_evaluate_end``; the evaluation runners are
        made on the first call if the config did not ask for evaluation during training.
        """
        self._require(Lifecycle.READY, "evaluate")
        evaluation = self._evaluation or await self._start_evaluation()
        return await evaluation.evaluate()

    # --- the sync twins ---------------------------------------------------------------------

    def train(self) -> dict[str, Any]:
        """Run one training iteration (sync twin of ``atrain()``)."""
        if self._tune_trial:  # Tune's train(): it calls step(), then adds its own keys
            result: dict[str, Any] = self._tune_call("train")
            return result
        return self._sync.run(self._lifecycle, "train", "atrain", self.atrain)

    def evaluate(self) -> dict[str, Any]:
        """Run one evaluation round (sync twin of ``aevaluate()``)."""
        return self._sync.run(self._lifecycle, "evaluate", "aevaluate", self.aevaluate)

    # --- what a result gathers --------------------------------------------------------------

    def _runner_groups(self) -> list[EnvRunnerGroup]:
        groups = (self._env_runner_group, self.eval_env_runner_group)
        return [group for group in groups if group is not None]

    def _callback_counts(self) -> dict[str, int]:
        return callback_counts(self.bus, self._runner_groups())

    def _take_control(self) -> Control | None:
        """Return every request handlers made since the last result (docs/control.md).

        ``on_train_result`` and ``on_evaluate_end`` (also of an ``evaluate()`` between two
        ``train()`` calls) through the Algorithm's publisher; ``on_sample_end``,
        ``on_episode_end`` and ``on_episode_step`` of every runner (in-process, worker
        process or Ray actor), training and evaluation.
        """
        return Control.combine(
            self._publisher.take_control(),
            *(group.take_control() for group in self._runner_groups()),
        )

    async def _apply_env_task_fn(self, result: dict[str, Any]) -> None:
        fn = self.config.env_task_fn
        if fn is None:
            return

        # A partial of a module-level function, so that it pickles to worker processes.
        await self.env_runner_group.aforeach_env_with_context(
            functools.partial(_set_task, fn, result)
        )


TaskFn = Callable[[dict[str, Any], TaskSettableEnv, EnvContext], Any]
"""``env_task_fn(train_results, task_settable_env, env_context) -> task`` (the task: any)."""


def _set_task(fn: TaskFn, result: dict[str, Any], env: object, env_context: EnvContext) -> None:
    if isinstance(env, TaskSettableEnv):
        env.set_task(fn(result, env, env_context))
