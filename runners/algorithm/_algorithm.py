"""The Algorithm: sets up runners and a learner, trains, publishes the Algorithm hooks."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio

from hookbus.events import (
    AlgorithmInit,
    CheckpointLoaded,
    TrainResult,
)
from hookbus.kernel import Bus, ConfigError, Control, Publisher
from hookbus.metrics import MetricsLogger, results

from .._errors import AlgorithmStateError
from .._loop import LoopThread, in_event_loop
from ..config import AlgorithmConfig
from ..env_runner import make_bus
from ..envs import TaskSettableEnv
from ..fleet import EnvRunnerGroup
from ._checkpoint import config_from_record, read_checkpoint, write_checkpoint
from ._evaluation import Evaluation
from ._facade import SyncFacade
from ._learning import LearnerHost
from ._results import apply_changes, assemble_result, callback_counts
from ._state import load_state, saved_state
from ._structure import check_structure

__all__ = ("CONTROL_KEY", "Algorithm")

CONTROL_KEY = "control"
_NO_CONTROL = Control()


class Algorithm(LearnerHost, SyncFacade):
    """Train a policy: sample with EnvRunners, update a learner, publish results.

    Build it with ``config.build()``. From sync code, ``train()``, ``evaluate()``,
    ``save_to_path()``, ``restore_from_path()`` and ``stop()`` drive the same coroutines as
    ``atrain()``, ... on one event loop that lives as long as the Algorithm, in a thread of
    its own; that works from a thread already running a loop (a notebook) too. Inside an
    event loop, ``async with config.build() as algo: await algo.atrain()`` runs it in that
    loop instead, and then only the async methods serve.

    Subclasses set ``build_learner()`` and ``training_step()``.
    """

    def __init__(self, config: AlgorithmConfig[Any], *, bus: Bus | None = None) -> None:
        self.config = config
        # A bus given inside a running loop belongs to that loop's code: only async use then.
        self._caller_loop = bus is not None and in_event_loop()
        self._owns_bus = bus is None
        self.bus = make_bus(config, bus)
        """The bus this Algorithm publishes to (shared with its inline runners)."""
        self.metrics = MetricsLogger()
        """The Algorithm's logger: results come from it; handlers get it as metrics_logger."""
        self.training_iteration = 0
        self.learner: Any = None
        self._env_runner_group: EnvRunnerGroup | None = None
        self._evaluation: Evaluation | None = None  # built only when something evaluates
        # Sync handlers of the hooks published between steps run in a worker thread, so
        # they may call sync facades (group.foreach_env, algorithm.save_to_path).
        self._publisher = Publisher(
            self.bus,
            "algorithm",
            offload_sync=(AlgorithmInit, TrainResult, CheckpointLoaded),
            algorithm=self,
            metrics_logger=self.metrics,
        )
        # While on_train_result runs: the results before it and the Controls so far
        # (``_settle_result``).
        self._logged: dict[str, Any] | None = None
        self._control: Control | None = None
        self._state = "built"  # -> "ready" -> "stopped"
        self._loop: LoopThread | None = None
        if not in_event_loop():
            self._start_own_loop()

    # --- what subclasses provide ------------------------------------------------------------

    async def training_step(self) -> None:
        """Run one iteration: sample, update the learner, sync weights, log metrics.

        Log ``num_env_steps_sampled_lifetime`` (reduce "sum"), the runners' metrics under
        ``env_runners`` and the learner's under ``learners``, as PPO and DQN do.
        """
        raise NotImplementedError

    def get_extra_state(self) -> dict[str, Any]:
        """Return algorithm-specific state for checkpoints (plain data, numpy array copies)."""
        return {}

    def set_extra_state(self, state: dict[str, Any]) -> None:
        """Restore what ``get_extra_state()`` returned."""

    def check_extra_state(self, state: dict[str, Any]) -> None:
        """Raise ValueError if ``set_extra_state(state)`` would fail; change nothing.

        Restores call it before changing anything. The default wants the structure of
        ``get_extra_state()``: the same keys, array shapes and dtypes, kinds of values.
        """
        check_structure(state, self.get_extra_state(), "extra")

    # --- acting -----------------------------------------------------------------------------

    def compute_single_action(
        self, observation: Any, *, explore: bool | None = None, policy_id: str | None = None
    ) -> Any:
        """Return the action for one observation (``explore`` defaults to the config's).

        Uses the local runner's exploration, so schedules such as epsilon-greedy apply.
        Multi-agent: ``policy_id`` names the policy that acts (needed with several).
        """
        self._require("ready", "compute_single_action")
        if policy_id is None:
            return self.env_runner.compute_single_action(observation, explore=explore)
        if not getattr(self.env_runner, "is_multi_agent", False):
            raise ConfigError(f"policy_id={policy_id!r} needs a multi-agent config")
        return self.env_runner.compute_single_action(
            observation, explore=explore, policy_id=policy_id
        )

    # --- lifecycle --------------------------------------------------------------------------

    async def asetup(self) -> None:
        """Make the runners and their envs, the learner; publish ``on_algorithm_init``."""
        if self._state != "built":
            raise AlgorithmStateError(f"cannot set up an Algorithm that is {self._state}")
        try:
            await self._setup()
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.astop()  # end any worker process that did start
            raise
        self._state = "ready"
        await self._publisher.publish(AlgorithmInit, algorithm=type(self).__name__)

    async def _setup(self) -> None:
        if self._loop is None:  # set up by the caller's loop (async with): only async use
            self._caller_loop = True
        config = self.config
        group = EnvRunnerGroup(config, bus=self.bus, loop=self._loop, publisher=self._publisher)
        self._env_runner_group = group
        self.learner = self._make_learner(group.local_env_runner)
        group.set_module(self.learner.module)
        await group.setup()
        if config.evaluation_interval or config.evaluation_num_env_runners:
            await self._start_evaluation()

    async def _start_evaluation(self) -> Evaluation:
        # Kept before setup: if setup fails halfway, astop() still ends what did start.
        self._evaluation = evaluation = Evaluation(self, self._publisher, loop=self._loop)
        await evaluation.setup()
        return evaluation

    async def atrain(self) -> dict[str, Any]:
        """Run one training iteration and return its results (a nested dict).

        Every ``evaluation_interval``-th iteration also runs an evaluation round: after the
        training step, or alongside it with ``evaluation_parallel_to_training``.
        ``result["control"]`` says what handlers asked the loop to do (stop, checkpoint,
        evaluate) and who asked: the Algorithm itself acts on none of it (docs/control.md).
        """
        self._require("ready", "train")
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
            result = assemble_result(self)
            # Requests made before on_train_result are in the result its handlers see;
            # theirs are added once they have run (or when a writer settles the result).
            self._control = self._take_control()
            result[CONTROL_KEY] = (self._control or _NO_CONTROL).to_result()
            if self._publisher.wants(TrainResult):
                self._logged = results(self.metrics)
                try:
                    await self._publisher.publish(
                        TrainResult,
                        {"result": result},
                        training_iteration=self.training_iteration,
                        result=result,
                    )
                    self._settle_result(result)
                finally:
                    self._logged = None
            await self._apply_env_task_fn(result)
        finally:
            # Close the iteration even if a handler raised: per-iteration sums start again
            # at 0, so the next result counts only its own steps.
            self.metrics.reduce()
        return result

    def _settle_result(self, result: dict[str, Any]) -> None:
        """Bring into ``result`` what ``on_train_result`` handlers did so far.

        Metrics they logged belong to this iteration's result; what they wrote into
        ``result`` directly stays as they wrote it. So do their errors under
        ``on_error="log"`` and their Controls. Called after the chain, and by the
        run-directory writers, which run late in it, so that their files hold the result
        ``train()`` returns. Does nothing outside the chain.
        """
        logged = self._logged
        if logged is None:
            return
        now = results(self.metrics)
        apply_changes(result, logged, now)
        self._logged = now  # a second call adds only what changed since
        result["callbacks"] = callback_counts(self)
        self._control = Control.combine(self._control, self._take_control())
        result[CONTROL_KEY] = (self._control or _NO_CONTROL).to_result()

    async def _restore_env_runners(self) -> None:
        """Restart failed training runners the settings allow; announce them (RLlib's way).

        As RLlib's ``restore_env_runners()`` before each training step: the restarted
        runners get the learner's current weights, then ``on_env_runners_recreated`` fires.
        """
        await self.env_runner_group.restore_and_announce(self.learner.module.get_state())

    async def _timed_training_step(self) -> None:
        with self.metrics.log_time(("timers", "training_iteration")):
            await self.training_step()

    async def aevaluate(self) -> dict[str, Any]:
        """Run one evaluation round and return its metrics (``result["evaluation"]``).

        Publishes ``on_evaluate_start`` and ``on_evaluate_end``; the evaluation runners are
        made on the first call if the config did not ask for evaluation during training.
        """
        self._require("ready", "evaluate")
        evaluation = self._evaluation or await self._start_evaluation()
        return await evaluation.evaluate()

    async def astop(self) -> None:
        """Stop the runners (closing envs and workers) and, if this Algorithm made it, the bus."""
        if self._state == "stopped":
            return
        self._state = "stopped"
        if self._evaluation is not None:
            await self._evaluation.astop()
        if self._env_runner_group is not None:
            await self._env_runner_group.astop()
        if self._owns_bus:
            self.bus.close()

    async def __aenter__(self) -> Algorithm:
        if self._state == "built":
            await self.asetup()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.astop()

    # --- checkpoints ------------------------------------------------------------------------

    async def asave_to_path(self, path: str | os.PathLike[str]) -> Path:
        """Write the Algorithm's state into directory ``path`` (created if needed).

        The file is written under a temporary name and renamed, so a crash never leaves a
        half-written checkpoint; the save also removes such temporary files that earlier,
        interrupted saves left in ``path``. The file carries a SHA-256 checksum.
        """
        self._require("ready", "save_to_path")
        directory = Path(path)
        await anyio.to_thread.run_sync(write_checkpoint, directory, saved_state(self))
        return directory

    async def arestore_from_path(self, path: str | os.PathLike[str]) -> None:
        """Load a state written by ``save_to_path``; publish ``on_checkpoint_loaded``.

        All or nothing: the checkpoint is verified (checksum) and checked against this
        Algorithm (sections, the learner's shapes, metrics, extra state) before anything
        changes, and a part that still fails to load rolls the others back. Any failure is
        a ConfigError naming the file; the Algorithm is then as it was.
        """
        self._require("ready", "restore_from_path")
        state = await anyio.to_thread.run_sync(read_checkpoint, path, type(self).__name__)
        load_state(self, state, path)
        await self.env_runner_group.sync_weights(self.learner.module.get_state())
        await self._publisher.publish(CheckpointLoaded, path=str(path))

    @classmethod
    def from_checkpoint(
        cls, path: str | os.PathLike[str], config: AlgorithmConfig[Any] | None = None
    ) -> Algorithm:
        """Build an Algorithm from a checkpoint and restore it: ready to train or act.

        The checkpoint keeps the config's data settings, never code; if the config held
        code (callbacks, an env creator), pass ``config`` (that config, or an equivalent).
        A checkpoint that cannot be restored is a ConfigError; what was built is stopped.
        """
        state = read_checkpoint(path)
        if config is None:
            config = config_from_record(state["config"], path)
        name = state["algorithm"]
        algo_class = config.algo_class
        if getattr(algo_class, "__name__", None) != name or not (
            isinstance(algo_class, type) and issubclass(algo_class, cls)
        ):
            raise ConfigError(
                f"checkpoint {str(path)!r} holds a {name} algorithm; "
                f"{type(config).__name__} builds {getattr(algo_class, '__name__', None)}"
            )
        try:
            algorithm: Algorithm = config.build()
        except Exception as exc:  # an env that is not registered here, a bad setting, ...
            raise ConfigError(f"cannot build checkpoint {str(path)!r}'s {name}: {exc}") from exc
        try:
            algorithm.restore_from_path(path)
        except BaseException:
            algorithm.stop()
            raise
        return algorithm

    # --- accessors and helpers --------------------------------------------------------------

    @property
    def env_runner_group(self) -> EnvRunnerGroup:
        """The training runners: the local one and the remote ones (set up first)."""
        if self._env_runner_group is None:
            raise AlgorithmStateError(
                "the Algorithm is not set up yet: use `async with config.build() as algo`"
            )
        return self._env_runner_group

    @property
    def env_runner(self) -> Any:
        """The local EnvRunner."""
        return self.env_runner_group.local_env_runner

    @property
    def eval_env_runner_group(self) -> EnvRunnerGroup | None:
        """The evaluation runners (None until something evaluates)."""
        return None if self._evaluation is None else self._evaluation.group

    @property
    def eval_env_runner(self) -> Any:
        """The local evaluation EnvRunner (None until something evaluates)."""
        group = self.eval_env_runner_group
        return None if group is None else group.local_env_runner

    def _require(self, state: str, action: str) -> None:
        if self._state != state:
            hint = " (use `async with config.build() as algo`)" if self._state == "built" else ""
            raise AlgorithmStateError(f"cannot {action}: the Algorithm is {self._state}{hint}")

    def _take_control(self) -> Control | None:
        """Return every request handlers made since the last result (docs/control.md).

        ``on_train_result`` and ``on_evaluate_end`` (also of an ``evaluate()`` between two
        ``train()`` calls) through the Algorithm's publisher; ``on_sample_end``,
        ``on_episode_end`` and ``on_episode_step`` of every runner (in-process, worker
        process or Ray actor), training and evaluation.
        """
        groups = (self._env_runner_group, self.eval_env_runner_group)
        return Control.combine(
            self._publisher.take_control(),
            *(group.take_control() for group in groups if group is not None),
        )

    async def _apply_env_task_fn(self, result: dict[str, Any]) -> None:
        fn = self.config.env_task_fn
        if fn is None:
            return

        # A partial of a module-level function, so that it pickles to worker processes.
        await self.env_runner_group.aforeach_env_with_context(
            functools.partial(_set_task, fn, result)
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._state}, iteration {self.training_iteration}>"


def _set_task(fn: Any, result: dict[str, Any], env: Any, env_context: Any) -> None:
    if isinstance(env, TaskSettableEnv):
        env.set_task(fn(result, env, env_context))
