"""The Algorithm: sets up runners and a learner, trains, publishes the Algorithm hooks.

One class, whose state is made in one place (``_init_algorithm``) and held by the parts it
composes, each handed what it needs:

- ``Setup`` (``_setup``): the lifecycle, the runner groups, the learner, the evaluation;
- ``Trainer`` (``_training``): iterations and evaluation rounds, their results;
- ``CheckpointStore`` (``_checkpoints``): saving and restoring, all or nothing;
- ``SyncFacade`` (``_facade``): the blocking twins, on the Algorithm's own loop;
- ``LearnerUpdates`` (``_learning``): updates between the learner hooks.

Every public method is a short delegation to one of them, or to the functions of
``_rllib_surface`` (modules and weights) and ``_tune`` (Tune's Trainable API). The surface
is RLlib's, hence its width; what subclasses provide comes first.

Its one base is Tune's ``Trainable`` when Ray Tune is installed, else ``object``, decided
once when this module runs (``_tune.py`` says why, and why this module is imported only on
first use of the name).
"""

from __future__ import annotations

import functools
import inspect
import os
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, NoReturn, Self, TypeVar

import anyio
import gymnasium as gym

from hookbus.events import (
    AlgorithmInit,
    BaseEvent,
    CheckpointLoaded,
    EnvRunnersRecreated,
    EvaluateEnd,
    EvaluateStart,
    TrainResult,
    publish_names,
)
from hookbus.kernel import Bus, ConfigError, Publisher
from hookbus.metrics import MetricsLogger

from .._deprecation import warn_deprecated
from .._errors import refuse_while_loading_main
from .._loop import blocking as run_blocking, in_event_loop
from .._module_spec import MultiRLModuleSpec, RLModuleSpec
from .._types import EnvSpec
from ..config import DEFAULT_MODULE_ID, AlgorithmConfig
from ..env_runner import EnvRunner, MultiAgentEnvRunner, make_bus
from ..fleet import EnvRunnerGroup
from . import _modules, _rllib_surface, _tune
from ._checkpoints import CheckpointStore, new_checkpoint_dir
from ._evaluation import Evaluation
from ._facade import SyncFacade
from ._learner import AnyLearner, Learner, MultiLearner
from ._learning import LearnerSettings, LearnerUpdates, Spaces, learner_settings
from ._lifecycle import Lifecycle
from ._modules import ModuleParts
from ._setup import Setup
from ._state import build_restored
from ._structure import check_structure
from ._training import Trainer
from ._tune import TuneCheckpoint

__all__ = ("Algorithm",)

B = TypeVar("B")

ALGORITHM_HOOK_EVENTS: tuple[type[BaseEvent], ...] = (
    AlgorithmInit,
    TrainResult,
    EvaluateStart,
    EvaluateEnd,
    CheckpointLoaded,
    EnvRunnersRecreated,
)
"""The Algorithm-side hooks: their sync handlers run in worker threads."""

if TYPE_CHECKING:
    _TrainableOrObject = object
else:  # Tune's Trainable when Ray Tune is installed (tune.Tuner(PPO) needs it), else object
    _TrainableOrObject = _tune.trainable_base()


class Algorithm(_TrainableOrObject):
    """Train a policy: sample with EnvRunners, update a learner, publish results.

    Build it with ``config.build()``. From sync code, ``train()``, ``evaluate()``,
    ``save_to_path()``, ``restore_from_path()`` and ``stop()`` drive the same coroutines as
    ``atrain()``, ... on one event loop that lives as long as the Algorithm, in a thread of
    its own; that works from a thread already running a loop (a notebook) too. Inside an
    event loop, ``async with config.build() as algo: await algo.atrain()`` runs it in that
    loop instead, and then only the async methods serve.

    Subclasses set ``build_learner()`` and ``atraining_step()`` (or RLlib's sync
    ``training_step()``).
    """

    config: AlgorithmConfig[Any]
    """The checked config this Algorithm was built with."""
    bus: Bus
    """The bus this Algorithm publishes to (shared with its inline runners)."""
    metrics: MetricsLogger
    """The Algorithm's logger: results come from it; handlers get it as metrics_logger."""
    _tune_trial = False
    """True on an Algorithm that Ray Tune built for a trial (``_tune.start_trial``)."""
    _tune_params: dict[str, Any]
    """A trial's settings as Tune resolved them (Tune's ``config`` result key)."""

    def __init__(
        self,
        config: AlgorithmConfig[Any] | Mapping[str, Any] | None = None,
        env: EnvSpec | None = None,
        logger_creator: object = None,
        *,
        bus: Bus | None = None,
        **tune_arguments: Any,
    ) -> None:
        """Build the Algorithm, as ``config.build()`` does (set up too, outside a loop).

        As RLlib's: ``config`` is an AlgorithmConfig or a dict of settings (RLlib's keys:
        ``num_env_runners``, ``lr``, ``env_config``, ...; None: the defaults); ``env``, if
        given, sets the env (a registered name, a gymnasium id, an Env class or creator).
        ``logger_creator`` (RLlib's, for Tune's loggers) is accepted and unused (an
        ``object``: never called): results go where ``config.reporting()`` says. Ray Tune
        builds a trial's Algorithm with ``storage=`` (``docs/tune.md``); no other keyword
        is taken.
        """
        refuse_while_loading_main()  # a worker re-running a script without the main guard
        storage = tune_arguments.pop("storage", None)
        if tune_arguments:
            raise TypeError(
                f"{type(self).__name__}() got unexpected keyword arguments "
                f"{', '.join(map(repr, tune_arguments))}; it takes config, env and bus"
            )
        if storage is not None:  # Ray Tune's trial: Tune's __init__ calls setup()
            _tune.start_trial(self, dict(config or {}), storage)
            return
        self._init_algorithm(self.config_for(config, env), bus)

    @classmethod
    def config_for(
        cls, config: AlgorithmConfig[Any] | Mapping[str, Any] | None, env: EnvSpec | None = None
    ) -> AlgorithmConfig[Any]:
        """Return the checked config ``Algorithm(config, env)`` builds with (a copy)."""
        frozen = False
        if config is None or isinstance(config, Mapping):
            built = cls.get_default_config().update_from_dict(config or {})
        elif isinstance(config, AlgorithmConfig):
            built, frozen = config.copy(copy_frozen=False), config.is_frozen
        else:
            raise ConfigError(
                f"{cls.__name__}(config=...) takes an AlgorithmConfig, a dict of settings or "
                f"None, got {config!r}"
            )
        if env is not None:
            built.environment(env)
        built.validate()
        resolved = built.resolved_copy()
        if frozen:
            resolved.freeze()
        return resolved

    def _init_algorithm(
        self, config: AlgorithmConfig[Any], bus: Bus | None, *, own_logdir: bool = False
    ) -> None:
        """Make the Algorithm's state: every attribute it has is set here."""
        self.config = config
        self.bus = make_bus(config, bus, own_logdir=own_logdir)
        self.metrics = MetricsLogger()
        self._counters: defaultdict[str, int] = defaultdict(int)
        """RLlib's counters by name, which RLlib's examples use to keep a curriculum's task
        (``algorithm._counters["current_env_task"]``); hookbus keeps none of its own here
        and does not checkpoint them."""
        # Sync handlers of the Algorithm-side hooks run in a worker thread, so they may call
        # sync facades (group.foreach_env_runner, algorithm.save_to_path) with worker
        # processes behind them, as RLlib's handlers do. They fire once per iteration or
        # round: the hop costs about a thread handover each (bench/dispatch.py).
        self._publisher = Publisher(
            self.bus,
            "algorithm",
            offload_sync=ALGORITHM_HOOK_EVENTS,
            algorithm=self,
            metrics_logger=self.metrics,
        )
        self._updates = LearnerUpdates(self._publisher, self.metrics)
        # A bus given inside a running loop belongs to that loop's code: only async use then.
        self._sync = SyncFacade(self.asetup, caller_loop=bus is not None and in_event_loop())
        self._setup = Setup(
            config,
            self.bus,
            self._publisher,
            self._sync,
            owns_bus=bus is None,
            build_learner=self.build_learner,
            build_multi_agent_learner=self.build_multi_agent_learner,
            make_evaluation=lambda: Evaluation(
                config,
                self.metrics,
                self._publisher,
                learner=self._setup.ready_learner,
                iteration=lambda: self._trainer.iteration,
                algorithm=self,  # what a custom_evaluation_function gets
                loop=self._sync.loop,
            ),
        )
        self._trainer = Trainer(
            config,
            self.bus,
            self.metrics,
            self._publisher,
            self._setup,
            training_step=self._run_training_step,
        )
        self._checkpoints = CheckpointStore(
            self, self._publisher, self._setup, modules=self._module_parts
        )
        if not in_event_loop():
            self._sync.start()

    def _blocking(self, name: str, twin: str, fn: Callable[..., Any], *args: object) -> Any:
        """Return ``await fn(*args)`` for sync method ``name`` (async twin ``twin``)."""
        return self._sync.run(self._setup.lifecycle, name, twin, fn, *args)

    # --- what subclasses provide ------------------------------------------------------------

    def build_learner(
        self, observation_space: gym.Space[Any], action_space: gym.Space[Any]
    ) -> Learner[Any]:
        """Return the learner (a ``Learner``: a ``module``, ``update(batch) -> stats``,
        ``get_state()`` and ``set_state()``). ``config.learner_class`` overrides it."""
        raise NotImplementedError

    def build_multi_agent_learner(self, spaces: Spaces) -> MultiLearner[Any]:
        """Return the learner of one module per policy (``spaces``: module id to its
        observation and action space), as ``MultiAgentLearner``. Algorithms that train
        multi-agent override it."""
        raise ConfigError(
            f"{type(self).__name__} does not support multi-agent training yet; use PPO, or "
            f"train a single agent (no policies, and an env that is not a MultiAgentEnv)"
        )

    def build_module_learner(
        self,
        module_id: str,
        spec: RLModuleSpec,
        *,
        seed: int,
        config_overrides: Mapping[str, Any] | None = None,
    ) -> Learner[Any]:
        """Return the learner of module ``module_id`` built from ``spec`` (its spaces set):
        what ``add_module()`` adds. Algorithms whose multi-agent learner takes modules
        (PPO) override it."""
        raise ConfigError(f"{type(self).__name__} cannot add modules while training; use PPO")

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

    async def _run_training_step(self) -> None:
        """Run the subclass's step: an async override, ``atraining_step()``, or RLlib's sync
        ``training_step()`` override in a worker thread (it may call the super's)."""
        step = self.training_step
        if inspect.iscoroutinefunction(step):
            await step()
        elif type(self).training_step is Algorithm.training_step:
            await self.atraining_step()  # no sync override: no thread hop
        else:
            await anyio.to_thread.run_sync(step)

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

    # --- for subclasses: the learner --------------------------------------------------------

    def learner_settings(self) -> LearnerSettings:
        """Return the learner settings every algorithm shares: ``lr``, ``gamma``,
        ``model_hiddens``, ``model_activation`` and ``seed`` (a fresh random one when the
        config sets none)."""
        return learner_settings(self.config)

    async def update_learner(
        self,
        batch: B,
        *,
        batch_size: int,
        update_index: int = 0,
        update: Callable[[B], Mapping[str, float]] | None = None,
        module_id: str = DEFAULT_MODULE_ID,
        learner: AnyLearner | None = None,
    ) -> Mapping[str, float]:
        """Run one learner update in a worker thread, between the learner hooks.

        ``on_learner_update_start`` and ``on_learner_update_end`` run on the event loop,
        before and after ``update(batch)`` (``learner.update`` by default) runs in a worker
        thread, so a start handler's change to the learner (``learner.lr = x``) applies to
        this update. Returns the update's stats. With neither hook subscribed this is just
        the thread hop: no event, no copy of the batch or the stats.

        In a multi-agent run, one call updates one module: ``module_id`` goes into the
        events, and ``learner`` (that module's learner; ``self.learner`` by default) is
        what handlers get as ``learner``, its ``module`` as ``module``.
        """
        learner = self.learner if learner is None else learner
        if update is None:
            if isinstance(learner, MultiLearner):
                raise TypeError(
                    "update_learner() updates one module: pass that module's learner "
                    "(learner=algo.learner.learners[module_id]) and its module_id"
                )
            update = learner.update
        return await self._updates.run(
            learner,
            update,
            batch,
            training_iteration=self.training_iteration + 1,  # the one in progress
            module_id=module_id,
            batch_size=batch_size,
            update_index=update_index,
        )

    def learner_hooks_wanted(self) -> bool:
        """Tell whether a learner hook has subscribers (else updates publish nothing).

        An algorithm that runs many updates per iteration (DQN) may then run them all in
        one worker-thread hop instead of one ``update_learner()`` each.
        """
        return self._updates.hooks_wanted()

    # --- training and evaluation ------------------------------------------------------------

    async def atrain(self) -> dict[str, Any]:
        """Run one training iteration and return its results (a nested dict).

        Every ``evaluation_interval``-th iteration also runs an evaluation round: after the
        training step, or alongside it with ``evaluation_parallel_to_training``.
        ``result["control"]`` says what handlers asked the loop to do (stop, checkpoint,
        evaluate) and who asked: the Algorithm itself acts on none of it (docs/control.md).
        """
        return await self._trainer.atrain()

    def train(self) -> dict[str, Any]:
        """Run one training iteration (sync twin of ``atrain()``)."""
        if self._tune_trial:  # Tune's train(): it calls step(), then adds its own keys
            result: dict[str, Any] = _tune.tune_method(self, "train")
            return result
        result = self._blocking("train", "atrain", self.atrain)
        return result

    async def aevaluate(self) -> dict[str, Any]:
        """Run one evaluation round and return its metrics (``result["evaluation"]``).

        Publishes ``on_evaluate_start`` and ``on_evaluate_end``; the evaluation runners are
        made on the first call if the config did not ask for evaluation during training.
        """
        return await self._trainer.aevaluate()

    def evaluate(self) -> dict[str, Any]:
        """Run one evaluation round (sync twin of ``aevaluate()``)."""
        result: dict[str, Any] = self._blocking("evaluate", "aevaluate", self.aevaluate)
        return result

    def compute_single_action(
        self, observation: Any, *, explore: bool | None = None, policy_id: str | None = None
    ) -> Any:
        """Return the action for one observation (``explore`` defaults to the config's).

        Uses the local runner's exploration, so schedules such as epsilon-greedy apply.
        Multi-agent: ``policy_id`` names the policy that acts (needed with several).
        """
        self._setup.require(Lifecycle.READY, "compute_single_action")
        runner = self.env_runner
        if policy_id is None:
            return runner.compute_single_action(observation, explore=explore)
        if not isinstance(runner, MultiAgentEnvRunner):
            raise ConfigError(f"policy_id={policy_id!r} needs a multi-agent config")
        return runner.compute_single_action(observation, explore=explore, policy_id=policy_id)

    # --- setting up and stopping ------------------------------------------------------------

    async def asetup(self) -> None:
        """Make the runners and their envs, the learner; publish ``on_algorithm_init``."""
        await self._setup.asetup(type(self).__name__)

    async def astop(self) -> None:
        """Stop the runners (closing envs and workers) and, if this Algorithm made it, the bus."""
        await self._setup.astop()

    def stop(self) -> None:
        """Stop the Algorithm and its event loop (sync twin of ``astop()``)."""
        if self._tune_trial:  # Tune's stop() calls cleanup(), which stops as below
            _tune.tune_method(self, "stop")
            return
        self._setup.stop()

    async def __aenter__(self) -> Self:
        if self._setup.lifecycle is Lifecycle.BUILT:
            await self.asetup()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.astop()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # --- checkpoints ------------------------------------------------------------------------

    async def asave_to_path(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the Algorithm's state into directory ``path`` (created if needed); return
        it. Without ``path``, as RLlib's: a new folder in the system's temporary directory.

        A crash at any moment leaves ``path`` absent or a complete checkpoint: a new folder
        is written beside and renamed into place, an existing one gets its file replaced
        by rename, both synced to disk; the save also removes what earlier, killed saves
        left (docs/runners.md). The file carries a SHA-256 checksum.
        """
        return await self._checkpoints.asave(path)

    def save_to_path(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write a checkpoint; return its folder (sync twin of ``asave_to_path()``)."""
        saved: Path = self._blocking("save_to_path", "asave_to_path", self.asave_to_path, path)
        return saved

    async def arestore_from_path(self, path: str | os.PathLike[str] | TuneCheckpoint) -> None:
        """Load a state written by ``save_to_path``; publish ``on_checkpoint_loaded``.

        ``path`` is the checkpoint's folder or, as in RLlib, Ray Tune's ``Checkpoint``
        (``result.checkpoint``; a remote one is copied to a temporary folder first).

        All or nothing: the checkpoint is verified (checksum) and checked against this
        Algorithm (sections, the learner's shapes, metrics, extra state) before anything
        changes, and a part that still fails to load rolls the others back. Any failure is
        a ConfigError naming the file; the Algorithm is then as it was.
        """
        await self._checkpoints.arestore(await _tune.acheckpoint_folder(path, "restore_from_path"))

    def restore_from_path(self, path: str | os.PathLike[str] | TuneCheckpoint) -> None:
        """Load a checkpoint (sync twin of ``arestore_from_path()``)."""
        folder = _tune.checkpoint_folder(path, "restore_from_path")
        self._blocking("restore_from_path", "arestore_from_path", self.arestore_from_path, folder)

    def save(self, checkpoint_dir: str | os.PathLike[str] | None = None, **kwargs: Any) -> Any:
        """Write a checkpoint into ``checkpoint_dir`` (a new temporary one by default).

        In a Ray Tune trial this is Tune's ``save()`` (its result, for Tune).
        """
        if self._tune_trial:
            return _tune.tune_method(self, "save", checkpoint_dir, **kwargs)
        if kwargs:
            raise TypeError(f"save() takes only checkpoint_dir, got {', '.join(kwargs)}")
        if checkpoint_dir is None:
            checkpoint_dir = new_checkpoint_dir(type(self).__name__)
        return self.save_to_path(checkpoint_dir)

    def restore(self, checkpoint_path: Any, **kwargs: Any) -> None:
        """Load a checkpoint: a folder or Tune's ``Checkpoint`` (RLlib's name for
        ``restore_from_path()``; Tune's in a trial)."""
        if self._tune_trial:
            _tune.tune_method(self, "restore", checkpoint_path, **kwargs)
            return
        if kwargs:
            raise TypeError(f"restore() takes only checkpoint_path, got {', '.join(kwargs)}")
        self.restore_from_path(checkpoint_path)

    @classmethod
    def from_checkpoint(
        cls,
        path: str | os.PathLike[str] | TuneCheckpoint,
        config: AlgorithmConfig[Any] | None = None,
        *,
        env: EnvSpec | None = None,
    ) -> Self:
        """Build an Algorithm from a checkpoint and restore it: ready to train or act.

        The checkpoint keeps the config's data settings, never code; if the config held
        code (callbacks, an env creator), pass ``config`` (that config, or an equivalent).
        ``env`` sets the env alone (of the checkpoint's config, or of ``config``). A
        checkpoint is data and its stored env is resolved only if that imports nothing (a
        name given to ``register_env``, a gymnasium id); a ``module:Name`` or
        ``file.py:Name`` is refused unless ``env`` or ``config`` is given. A checkpoint
        that cannot be restored is a ConfigError; what was built is stopped. ``path`` may
        be Ray Tune's ``Checkpoint`` (``result.checkpoint``), as in RLlib.
        """
        return build_restored(cls, _tune.checkpoint_folder(path, "from_checkpoint"), config, env)

    # --- RLlib's accessors ------------------------------------------------------------------

    @classmethod
    def get_default_config(cls) -> AlgorithmConfig[Any]:
        """Return a new config of this algorithm (RLlib's classmethod): ``PPO`` gives a
        ``PPOConfig()``; a subclass without a config class of its own gets its base's."""
        return _rllib_surface.default_config(cls)

    @property
    def learner(self) -> AnyLearner:
        """The learner (``build_learner()``'s, or ``config.learner_class``'s; set up first)."""
        return self._setup.ready_learner()

    @learner.setter
    def learner(self, learner: AnyLearner) -> None:
        self._setup.learner = learner

    def get_module(self, module_id: str = DEFAULT_MODULE_ID) -> Any:
        """Return the learner's module ``module_id`` (RLlib's; the runners act with it)."""
        return _rllib_surface.get_module(self.learner, module_id)

    def add_module(
        self,
        module_id: str,
        module_spec: RLModuleSpec,
        *,
        config_overrides: Mapping[str, Any] | None = None,
        new_agent_to_module_mapping_fn: Callable[..., str] | None = None,
        new_should_module_be_updated: Any = None,
        add_to_learners: bool = True,
        add_to_env_runners: bool = True,
        add_to_eval_env_runners: bool = True,
    ) -> MultiRLModuleSpec:
        """Add module ``module_id``, built from ``module_spec``, while training (RLlib's).

        The learner gets it (a PPO learner with ``config_overrides``, or one that never
        trains a class of your own), then the config (``policies``, ``rl_module_spec``,
        and the new mapping and modules to train if given), then every training and
        evaluation runner, in-process or not, with the weights. Running episodes keep
        their mapping. Returns the new MultiRLModuleSpec. Sync twin of ``aadd_module``;
        callable from sync callbacks (``on_train_result``) on every backend.
        """
        call = functools.partial(
            self.aadd_module,
            module_id,
            module_spec,
            config_overrides=config_overrides,
            new_agent_to_module_mapping_fn=new_agent_to_module_mapping_fn,
            new_should_module_be_updated=new_should_module_be_updated,
            add_to_learners=add_to_learners,
            add_to_env_runners=add_to_env_runners,
            add_to_eval_env_runners=add_to_eval_env_runners,
        )
        added: MultiRLModuleSpec = self._blocking("add_module", "aadd_module", call)
        return added

    async def aadd_module(
        self, module_id: str, module_spec: RLModuleSpec, **kwargs: Any
    ) -> MultiRLModuleSpec:
        """Async twin of ``add_module()`` (same keywords)."""
        self._setup.require(Lifecycle.READY, "add_module")
        return await _modules.add_module(self._module_parts(), module_id, module_spec, **kwargs)

    def remove_module(
        self,
        module_id: str,
        *,
        new_agent_to_module_mapping_fn: Callable[..., str] | None = None,
        new_should_module_be_updated: Any = None,
        remove_from_learners: bool = True,
        remove_from_env_runners: bool = True,
        remove_from_eval_env_runners: bool = True,
    ) -> MultiRLModuleSpec:
        """Remove module ``module_id`` from the learner, the config and every runner
        (RLlib's); the runners drop their ongoing episodes. Returns the new
        MultiRLModuleSpec. hookbus's runners act with the learner's modules, so the
        ``remove_from_*`` keywords must stay True. Sync twin of ``aremove_module``."""
        if not (remove_from_learners and remove_from_env_runners and remove_from_eval_env_runners):
            raise ConfigError(
                "remove_module(): hookbus removes a module from the learner and every runner "
                "at once (the runners act with the learner's modules); leave remove_from_* True"
            )
        call = functools.partial(
            self.aremove_module,
            module_id,
            new_agent_to_module_mapping_fn=new_agent_to_module_mapping_fn,
            new_should_module_be_updated=new_should_module_be_updated,
        )
        removed: MultiRLModuleSpec = self._blocking("remove_module", "aremove_module", call)
        return removed

    async def aremove_module(self, module_id: str, **kwargs: Any) -> MultiRLModuleSpec:
        """Async twin of ``remove_module()`` (its mapping and training keywords)."""
        self._setup.require(Lifecycle.READY, "remove_module")
        return await _modules.remove_module(self._module_parts(), module_id, **kwargs)

    def get_state(
        self, components: Any = None, *, not_components: Any = None, **kwargs: Any
    ) -> dict[str, Any]:
        """Return RLlib's nested state of what hookbus keeps there: the module weights
        (``learner_group/learner/rl_module``, by module id) and ``training_iteration``.
        ``components`` and ``not_components`` pick top-level keys, as RLlib's."""
        state = _modules.get_state(self._module_parts(), self.training_iteration)
        keep = [components] if isinstance(components, str) else components
        drop = [not_components] if isinstance(not_components, str) else not_components or []
        return {k: v for k, v in state.items() if (keep is None or k in keep) and k not in drop}

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Load RLlib's nested ``state``: module weights by module id (the modules it names;
        the others keep theirs), sent on to the runners, and ``training_iteration``.

        As RLlib's self-play callback does after ``add_module``: ``algorithm.set_state(
        {"learner_group": {"learner": {"rl_module": {new_id: main.get_state()}}}})``.
        Sync twin of ``aset_state``.
        """
        self._blocking("set_state", "aset_state", self.aset_state, state)

    async def aset_state(self, state: Mapping[str, Any]) -> None:
        """Async twin of ``set_state()``."""
        self._setup.require(Lifecycle.READY, "set_state")
        iteration = await _modules.set_state(self._module_parts(), state)
        if iteration is not None:
            self.training_iteration = iteration

    def _module_parts(self) -> ModuleParts:
        """What adding, removing and checkpointing modules works on, as it is now."""
        evaluation = self._setup.evaluation
        return ModuleParts(
            config=self.config,
            learner=self.learner,
            group=self.env_runner_group,
            evaluation=None
            if evaluation is None or evaluation.group is None
            else (evaluation.config, evaluation.module, evaluation.group),
            build=self.build_module_learner,
        )

    def get_policy(self, policy_id: str = DEFAULT_MODULE_ID) -> NoReturn:
        """Refuse RLlib's old-stack ``get_policy``: name its new-stack counterpart."""
        raise NotImplementedError(
            f"get_policy({policy_id!r}) is RLlib's old API stack (Policy objects), which "
            f"hookbus does not have; use algo.get_module({policy_id!r}), the RLModule "
            f"(its forward_inference() acts), as RLlib's new stack does"
        )

    def get_weights(self) -> dict[str, Any]:
        """Return the learner's weights by module id (RLlib's new-stack form)."""
        return _rllib_surface.get_weights(self.learner)

    def set_weights(self, weights: dict[str, Any]) -> None:
        """Load weights by module id (as ``get_weights()`` returns them) into the learner;
        the runners act with them from the next iteration (in-process ones at once)."""
        _rllib_surface.set_weights(self.learner, weights)

    @property
    def training_iteration(self) -> int:
        """The training iterations done so far."""
        return self._trainer.iteration

    @training_iteration.setter
    def training_iteration(self, value: int) -> None:
        self._trainer.iteration = value

    @property
    def iteration(self) -> int:
        """The training iterations done so far (RLlib's name; ``training_iteration``)."""
        return self.training_iteration

    @property
    def env_runner_group(self) -> EnvRunnerGroup:
        """The training runners: the local one and the remote ones (set up first)."""
        return self._setup.ready_group()

    @property
    def env_runner(self) -> EnvRunner:
        """The local EnvRunner."""
        return self.env_runner_group.local_env_runner

    @property
    def eval_env_runner_group(self) -> EnvRunnerGroup | None:
        """The evaluation runners (None until something evaluates)."""
        evaluation = self._setup.evaluation
        return None if evaluation is None else evaluation.group

    @property
    def eval_env_runner(self) -> EnvRunner | None:
        """The local evaluation EnvRunner (None until something evaluates)."""
        group = self.eval_env_runner_group
        return None if group is None else group.local_env_runner

    def restore_env_runners(self, env_runner_group: EnvRunnerGroup) -> list[int]:
        """Restart the failed runners of ``env_runner_group`` that the fault-tolerance
        settings allow, with the learner's weights; publish ``on_env_runners_recreated``;
        return their worker indices (RLlib's method; sync twin of ``arestore_env_runners``)."""
        restored: list[int] = self._blocking(
            "restore_env_runners",
            "arestore_env_runners",
            self.arestore_env_runners,
            env_runner_group,
        )
        return restored

    async def arestore_env_runners(self, env_runner_group: EnvRunnerGroup) -> list[int]:
        """Async twin of ``restore_env_runners()``."""
        weights = self.learner.module.get_state()
        return await env_runner_group.restore_and_announce(weights)

    @property
    def workers(self) -> EnvRunnerGroup:
        """Deprecated in RLlib: ``env_runner_group``."""
        warn_deprecated("Algorithm.workers", "Algorithm.env_runner_group", stacklevel=3)
        return self.env_runner_group

    @property
    def evaluation_workers(self) -> EnvRunnerGroup | None:
        """Deprecated in RLlib: ``eval_env_runner_group``."""
        warn_deprecated("Algorithm.evaluation_workers", "Algorithm.eval_env_runner_group")
        return self.eval_env_runner_group

    # --- Ray Tune's Trainable API (Tune calls these on a trial's Algorithm) -----------------

    def setup(self, config: dict[str, Any]) -> None:
        """Build the Algorithm from the trial's resolved settings (Tune's ``setup``).

        ``config`` is ``AlgorithmConfig.to_dict()``'s flat form (or the view by section),
        search spaces resolved; each value is checked now, as ``validate()`` checks it.
        With a run directory configured (``reporting(logdir=...)``), hookbus's writers
        write into ``<trial dir>/hookbus`` instead, one per trial (a trial restarted from
        scratch starts its files afresh there).
        """
        self._tune_params = config
        # The trial's folder is the trial's alone: a trial Tune restarts from scratch finds
        # its own earlier attempt there, not another run.
        self._init_algorithm(_tune.trial_config(self, config), None, own_logdir=True)

    def step(self) -> dict[str, Any]:
        """Run one training iteration (Tune's ``step``: ``train()`` calls it)."""
        result: dict[str, Any] = self._blocking("train", "atrain", self.atrain)
        return result

    def save_checkpoint(self, checkpoint_dir: str) -> None:
        """Write hookbus's checkpoint into Tune's ``checkpoint_dir``."""
        self.save_to_path(checkpoint_dir)

    def load_checkpoint(self, checkpoint: str | os.PathLike[str]) -> None:
        """Load hookbus's checkpoint from the directory Tune gives."""
        self.restore_from_path(checkpoint)

    def cleanup(self) -> None:
        """Stop the Algorithm: its runners, worker processes and event loop."""
        self._setup.stop()

    def reset_config(self, new_config: dict[str, Any]) -> bool:
        """Start afresh with ``new_config`` in this actor (Tune's ``reuse_actors``)."""
        self.cleanup()
        self.setup(new_config)
        return True

    def get_auto_filled_metrics(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Tune's auto-filled result keys, ``config`` being the trial's settings dict."""
        params = getattr(self, "_tune_params", {})
        return _tune.auto_filled_metrics(self, params, *args, **kwargs)

    @classmethod
    def default_resource_request(
        cls, config: AlgorithmConfig[Any] | Mapping[str, Any] | None
    ) -> Any:
        """Size a trial as its config does, as RLlib's Algorithm (Tune calls it).

        One bundle of 1 CPU for the Algorithm's process (its local runner and learner),
        then one bundle of ``num_cpus_per_env_runner`` CPUs per remote runner, training
        and evaluation, when they run in worker processes or Ray actors. Inline runners
        are tasks in the Algorithm's process: they take no bundle. ``config`` is an
        AlgorithmConfig or a dict of settings (Tune passes the trial's), as RLlib's takes.
        """
        return _tune.resource_request(cls, config)

    def __repr__(self) -> str:
        # getattr: Tune may show a trial's Algorithm before its setup() has run
        setup = getattr(self, "_setup", None)
        lifecycle = Lifecycle.BUILT if setup is None else setup.lifecycle
        trainer = getattr(self, "_trainer", None)
        iteration = 0 if trainer is None else trainer.iteration
        return f"<{type(self).__name__} {lifecycle}, iteration {iteration}>"


# The class reports its public home, ``hookbus.runners``, from the moment it exists, however
# it was first reached; pickling by reference looks it up there (``runners.__getattr__``).
publish_names("hookbus.runners", globals(), __all__)
