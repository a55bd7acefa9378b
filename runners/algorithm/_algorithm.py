"""The Algorithm: sets up runners and a learner, trains, publishes the Algorithm hooks.

One class, whose state is made in one place (``_init_algorithm``) and held by the parts it
composes, each handed what it needs:

- ``Setup`` (``_setup``): the lifecycle, the runner groups, the learner, the evaluation;
- ``Trainer`` (``_training``): iterations and evaluation rounds, their results;
- ``CheckpointStore`` (``_checkpoints``): saving and restoring, all or nothing;
- ``SyncFacade`` (``_facade``): the blocking twins, on the Algorithm's own loop;
- ``LearnerUpdates`` (``_learning``): updates between the learner hooks.

Every public method is a short delegation to one of them. The surface is RLlib's, hence its
width, and its parts change for different reasons, so they are written where each changes:
this module has what hookbus's training is (building, what subclasses provide, training
and evaluating, setting up and stopping) and Tune's Trainable API; two bases holding no
state add RLlib's names (``_rllib_surface.RLlibNames``: accessors, modules, state and
weights, deprecated names) and the checkpoint methods (``_checkpoints.CheckpointMethods``).

Its last base is Tune's ``Trainable`` when Ray Tune is installed, else ``object``, decided
once when this module runs (``_tune.py`` says why, and why this module is imported only on
first use of the name).
"""

from __future__ import annotations

import inspect
import os
from collections import defaultdict
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar

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

from .._errors import refuse_while_loading_main
from .._loop import blocking as run_blocking, in_event_loop
from .._types import EnvSpec
from ..config import DEFAULT_MODULE_ID, AlgorithmConfig, RLModuleSpec
from ..env_runner import make_bus
from . import _tune
from ._checkpoints import CheckpointMethods, CheckpointStore
from ._evaluation import Evaluation
from ._facade import SyncFacade
from ._learner import AnyLearner, Learner, MultiLearner
from ._learning import LearnerSettings, LearnerUpdates, Spaces, learner_settings
from ._lifecycle import Lifecycle
from ._rllib_surface import RLlibNames
from ._setup import Setup
from ._structure import check_structure
from ._training import Trainer

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


class Algorithm(RLlibNames, CheckpointMethods, _TrainableOrObject):
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
