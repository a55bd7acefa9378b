"""The Algorithm: sets up runners and a learner, trains, publishes the Algorithm hooks."""

from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio
import numpy as np

from hookbus.events import AlgorithmInit, CheckpointLoaded, TrainResult, codec
from hookbus.kernel import Bus, ConfigError
from hookbus.metrics import MetricsLogger, results

from ._builtin import EnvRunnerMetrics
from ._config import AlgorithmConfig
from ._env import TaskSettableEnv
from ._errors import AlgorithmStateError
from ._evaluation import EVALUATION_KEY, Evaluation
from ._loop import LoopThread, in_event_loop
from .backends._group import EnvRunnerGroup

__all__ = ("CHECKPOINT_FILE", "Algorithm")

CHECKPOINT_FILE = "algorithm_state.msgpack"
_CHECKPOINT_VERSION = 1


class Algorithm:
    """Train a policy: sample with EnvRunners, update a learner, publish results.

    Build it with ``config.build()``. From sync code, ``train()``, ``evaluate()``,
    ``save_to_path()``, ``restore_from_path()`` and ``stop()`` drive the same coroutines as
    ``atrain()``, ... on one event loop that lives as long as the Algorithm. Inside an event
    loop, use ``async with config.build() as algo: await algo.atrain()``.

    Subclasses set ``build_learner()`` and may override ``training_step()``.
    """

    def __init__(self, config: AlgorithmConfig, *, bus: Bus | None = None) -> None:
        self.config = config
        if bus is None:
            bus = Bus(
                config.callbacks_class,
                on_error=config.on_error,
                plugins=config.plugins,
                **config.callbacks_per_hook,
            )
            self._owns_bus = True
        else:
            if config.on_error != bus.on_error:
                raise ConfigError(
                    f"on_error={config.on_error!r} in config.callbacks() differs from the "
                    f"shared bus's {bus.on_error!r}; set it on the Bus"
                )
            bus.add_callbacks(config.callbacks_class, **config.callbacks_per_hook)
            self._owns_bus = False
        if not any(isinstance(cb, EnvRunnerMetrics) for cb in bus.callbacks):
            bus.add_callbacks(EnvRunnerMetrics())
        self.bus = bus
        """The bus this Algorithm publishes to (shared with its inline runners)."""
        self.metrics = MetricsLogger()
        """The Algorithm's logger: results come from it; handlers get it as metrics_logger."""
        self.training_iteration = 0
        self.learner: Any = None
        self.env_runner_group: EnvRunnerGroup | None = None
        self._evaluation: Evaluation | None = None  # built only when something evaluates
        self._seq = 0
        self._state = "built"  # -> "ready" -> "stopped"
        self._loop: LoopThread | None = None
        if not in_event_loop():
            self._loop = LoopThread()
            try:
                self._loop.call(self.asetup)
            except BaseException:
                self._loop.close()
                raise

    # --- what subclasses provide ------------------------------------------------------------

    def build_learner(self, observation_space: Any, action_space: Any) -> Any:
        """Return the learner: an object with ``module``, ``update(episodes) -> stats``,
        ``get_state()`` and ``set_state()``. ``config.learner_class`` overrides it."""
        raise NotImplementedError

    async def training_step(self) -> None:
        """Run one iteration: sample, update the learner, sync weights, log metrics."""
        group, config, metrics = self._group, self.config, self.metrics
        with metrics.log_time(("timers", "env_runner_sampling_timer")):
            episodes = await group.sample(config.train_batch_size)
        metrics.aggregate(await group.get_metrics(), key="env_runners")
        metrics.log_value("num_env_steps_sampled_lifetime", sum(map(len, episodes)), reduce="sum")
        with metrics.log_time(("timers", "learner_update_timer")):
            # Off the event loop's thread, so an embedding service stays responsive.
            stats = await anyio.to_thread.run_sync(self.learner.update, episodes)
        metrics.log_dict(stats, key=("learners", "default_policy"), reduce="item")
        with metrics.log_time(("timers", "synch_weights")):
            await group.sync_weights(self.learner.module.get_state())

    def get_extra_state(self) -> dict[str, Any]:
        """Return algorithm-specific state for checkpoints (plain data and numpy arrays)."""
        return {}

    def set_extra_state(self, state: dict[str, Any]) -> None:
        """Restore what ``get_extra_state()`` returned."""

    # --- acting -----------------------------------------------------------------------------

    def compute_single_action(self, observation: Any, *, explore: bool | None = None) -> Any:
        """Return the action for one observation (``explore`` defaults to the config's).

        Uses the local runner's exploration, so schedules such as epsilon-greedy apply.
        """
        self._require("ready", "compute_single_action")
        runner = self.env_runner
        explore = self.config.explore if explore is None else explore
        batch = np.asarray(observation)[None]
        actions = runner._exploration.get_actions(
            self.learner.module, batch, runner._rng, runner._timestep, explore
        )
        return np.asarray(actions)[0]

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
        if self.bus.has_subscribers(AlgorithmInit):
            event = AlgorithmInit(
                source="algorithm", seq=self._next_seq(), algorithm=type(self).__name__
            )
            await self.bus.publish(event, algorithm=self, metrics_logger=self.metrics)

    async def _setup(self) -> None:
        config = self.config
        group = EnvRunnerGroup(config, bus=self.bus)
        self.env_runner_group = group
        env = group.local_env_runner.env
        learner_class = config.learner_class
        if learner_class is not None:
            self.learner = learner_class(
                config, env.single_observation_space, env.single_action_space
            )
        else:
            self.learner = self.build_learner(env.single_observation_space, env.single_action_space)
        group.set_module(self.learner.module)
        await group.setup()
        if config.evaluation_interval or config.evaluation_num_env_runners:
            await self._start_evaluation()

    async def _start_evaluation(self) -> Evaluation:
        # Kept before setup: if setup fails halfway, astop() still ends what did start.
        self._evaluation = evaluation = Evaluation(self)
        await evaluation.setup()
        return evaluation

    async def atrain(self) -> dict[str, Any]:
        """Run one training iteration and return its results (a nested dict).

        Every ``evaluation_interval``-th iteration also runs an evaluation round: after the
        training step, or alongside it with ``evaluation_parallel_to_training``.
        """
        self._require("ready", "train")
        evaluation = self._evaluation
        if evaluation is None or not evaluation.due(self.training_iteration + 1):
            await self._timed_training_step()
        elif self.config.evaluation_parallel_to_training:
            await evaluation.train_and_evaluate(self._timed_training_step)
        else:
            await self._timed_training_step()
            await evaluation.evaluate()
        self.training_iteration += 1
        result = self._result()
        if self.bus.has_subscribers(TrainResult):
            logged = results(self.metrics)
            event = TrainResult(
                source="algorithm",
                seq=self._next_seq(),
                training_iteration=self.training_iteration,
                result=result,
            )
            await self.bus.publish(
                event, algorithm=self, metrics_logger=self.metrics, result=result
            )
            # Metrics that on_train_result handlers logged belong to this iteration's result;
            # what they wrote into `result` directly stays as they wrote it.
            _apply_changes(result, logged, results(self.metrics))
        await self._apply_env_task_fn(result)
        self.metrics.reduce()  # close the iteration: per-iteration sums start again at 0
        return result

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
        if self.env_runner_group is not None:
            await self.env_runner_group.astop()
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
        half-written checkpoint.
        """
        self._require("ready", "save_to_path")
        state = {
            "version": _CHECKPOINT_VERSION,
            "algorithm": type(self).__name__,
            "training_iteration": self.training_iteration,
            "learner": self.learner.get_state(),
            "metrics": self.metrics.get_state(),
            "callbacks": _callback_states(self.bus.callbacks),
            "extra": self.get_extra_state(),
        }
        data = codec.encode_msgpack(state)
        directory = Path(path)
        await anyio.to_thread.run_sync(_write_atomically, directory, data)
        return directory

    async def arestore_from_path(self, path: str | os.PathLike[str]) -> None:
        """Load a state written by ``save_to_path``; publish ``on_checkpoint_loaded``."""
        self._require("ready", "restore_from_path")
        file = Path(path) / CHECKPOINT_FILE
        try:
            data = await anyio.Path(file).read_bytes()
        except FileNotFoundError:
            raise ConfigError(f"no checkpoint at {str(path)!r}: {file.name} is missing") from None
        try:
            state = codec.decode_msgpack(data)
        except codec.CodecError as exc:
            raise ConfigError(f"{str(file)!r} is not a readable checkpoint: {exc}") from exc
        if not isinstance(state, dict) or state.get("version") != _CHECKPOINT_VERSION:
            raise ConfigError(
                f"{str(file)!r} is not a hookbus checkpoint of version {_CHECKPOINT_VERSION}"
            )
        if state["algorithm"] != type(self).__name__:
            raise ConfigError(
                f"checkpoint {str(path)!r} holds a {state['algorithm']} algorithm, "
                f"not {type(self).__name__}"
            )
        self.training_iteration = state["training_iteration"]
        self.learner.set_state(state["learner"])
        self.metrics.set_state(state["metrics"])
        _set_callback_states(self.bus.callbacks, state["callbacks"])
        self.set_extra_state(state.get("extra", {}))
        assert self.env_runner_group is not None
        await self.env_runner_group.sync_weights(self.learner.module.get_state())
        if self.bus.has_subscribers(CheckpointLoaded):
            event = CheckpointLoaded(source="algorithm", seq=self._next_seq(), path=str(path))
            await self.bus.publish(event, algorithm=self, metrics_logger=self.metrics)

    # --- the sync facade --------------------------------------------------------------------

    def train(self) -> dict[str, Any]:
        """Run one training iteration (sync twin of ``atrain()``)."""
        result: dict[str, Any] = self._sync("train", "atrain", self.atrain)
        return result

    def evaluate(self) -> dict[str, Any]:
        """Run one evaluation round (sync twin of ``aevaluate()``)."""
        metrics: dict[str, Any] = self._sync("evaluate", "aevaluate", self.aevaluate)
        return metrics

    def save_to_path(self, path: str | os.PathLike[str]) -> Path:
        """Write a checkpoint (sync twin of ``asave_to_path()``)."""
        directory: Path = self._sync("save_to_path", "asave_to_path", self.asave_to_path, path)
        return directory

    def restore_from_path(self, path: str | os.PathLike[str]) -> None:
        """Load a checkpoint (sync twin of ``arestore_from_path()``)."""
        self._sync("restore_from_path", "arestore_from_path", self.arestore_from_path, path)

    def stop(self) -> None:
        """Stop the Algorithm and its event loop (sync twin of ``astop()``)."""
        if self._loop is None:
            if in_event_loop():
                raise self._in_loop_error("stop", "astop")
            return
        try:
            self._loop.call(self.astop)
        finally:
            self._loop.close()
            self._loop = None

    def __enter__(self) -> Algorithm:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # --- accessors and helpers --------------------------------------------------------------

    @property
    def env_runner(self) -> Any:
        """The local EnvRunner."""
        return self._group.local_env_runner

    @property
    def eval_env_runner_group(self) -> EnvRunnerGroup | None:
        """The evaluation runners (None until something evaluates)."""
        return None if self._evaluation is None else self._evaluation.group

    @property
    def eval_env_runner(self) -> Any:
        """The local evaluation EnvRunner (None until something evaluates)."""
        group = self.eval_env_runner_group
        return None if group is None else group.local_env_runner

    @property
    def _group(self) -> EnvRunnerGroup:
        if self.env_runner_group is None:
            raise AlgorithmStateError(
                "the Algorithm is not set up yet: use `async with config.build() as algo`"
            )
        return self.env_runner_group

    def _sync(self, name: str, twin: str, fn: Any, *args: Any) -> Any:
        if self._loop is None:
            if in_event_loop():
                raise self._in_loop_error(name, twin)
            raise AlgorithmStateError(f"{name}() after stop(): the Algorithm is stopped")
        return self._loop.call(fn, *args)

    @staticmethod
    def _in_loop_error(name: str, twin: str) -> AlgorithmStateError:
        return AlgorithmStateError(
            f"{name}() blocks, so it cannot run inside an event loop; use `await algo.{twin}()` "
            f"(with `async with config.build() as algo:`)"
        )

    def _require(self, state: str, action: str) -> None:
        if self._state != state:
            hint = " (use `async with config.build() as algo`)" if self._state == "built" else ""
            raise AlgorithmStateError(f"cannot {action}: the Algorithm is {self._state}{hint}")

    def _next_seq(self) -> int:
        seq = self._seq
        self._seq = seq + 1
        return seq

    def _result(self) -> dict[str, Any]:
        result = results(self.metrics)
        evaluation = self._evaluation
        if evaluation is not None and evaluation.last is not None:
            # The latest round's metrics, as its on_evaluate_end handlers left them; every
            # later result carries them too (RLlib's always_attach_evaluation_results).
            result[EVALUATION_KEY] = _copy_tree(evaluation.last)
        result["training_iteration"] = self.training_iteration
        # Handler errors counted on this bus, and in worker processes (their own buses).
        groups = [self.env_runner_group, self.eval_env_runner_group]
        remote = sum(group.handler_errors() for group in groups if group is not None)
        result["callbacks"] = {"errors": self.bus.statistics().errors + remote}
        return result

    async def _apply_env_task_fn(self, result: dict[str, Any]) -> None:
        fn = self.config.env_task_fn
        if fn is None:
            return

        # A partial of a module-level function, so that it pickles to worker processes.
        await self._group.foreach_env_with_context(functools.partial(_set_task, fn, result))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._state}, iteration {self.training_iteration}>"


def _set_task(fn: Any, result: dict[str, Any], env: Any, env_context: Any) -> None:
    if isinstance(env, TaskSettableEnv):
        env.set_task(fn(result, env, env_context))


def _write_atomically(directory: Path, data: bytes) -> None:
    """Write the checkpoint file under a temporary name, then rename it into place."""
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".msgpack")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, directory / CHECKPOINT_FILE)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _copy_tree(tree: dict[str, Any]) -> dict[str, Any]:
    """Copy the nested dicts of ``tree`` (its leaves are shared)."""
    return {k: _copy_tree(v) if isinstance(v, dict) else v for k, v in tree.items()}


def _apply_changes(result: dict[str, Any], before: dict[str, Any], after: dict[str, Any]) -> None:
    """Copy into ``result`` every value that changed from ``before`` to ``after``."""
    for key, value in after.items():
        old = before.get(key)
        if isinstance(value, dict) and isinstance(old, dict) and isinstance(result.get(key), dict):
            _apply_changes(result[key], old, value)
        elif key not in before or old != value:
            result[key] = value


def _callback_states(callbacks: tuple[object, ...]) -> list[dict[str, Any]]:
    states = []
    for cb in callbacks:
        get_state = getattr(cb, "get_state", None)
        state = get_state() if get_state is not None else None
        states.append({"class": type(cb).__qualname__, "state": state})
    return states


def _set_callback_states(callbacks: tuple[object, ...], states: list[dict[str, Any]]) -> None:
    by_class: dict[str, list[Any]] = {}
    for record in states:
        by_class.setdefault(record["class"], []).append(record["state"])
    for cb in callbacks:
        saved = by_class.get(type(cb).__qualname__)
        if saved:
            state = saved.pop(0)
            set_state = getattr(cb, "set_state", None)
            if state is not None and set_state is not None:
                set_state(state)
