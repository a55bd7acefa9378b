"""The Algorithm: sets up runners and a learner, trains, publishes the Algorithm hooks.

The class is the public surface (RLlib's names, sync twins, checkpoints, accessors); this
module holds its construction, what subclasses provide and use (the learner, extra state)
and what it holds. Each method is a few lines over a collaborator it composes:
``SyncFacade`` (``_facade``), ``LearnerUpdates`` (``_learning``), the result
(``_results``), checkpoint state (``_state``) and ``Evaluation`` (``_evaluation``). The
rest of its methods come from its bases, one concern each: ``Training`` (``_training``:
iterations and evaluation rounds), ``SetupAndStop`` (``_setup``), ``Checkpoints``
(``_checkpoints``), ``RLlibSurface`` (``_rllib_surface``) and ``TuneTrainable``
(``_tune``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import gymnasium as gym

from hookbus.events import (
    AlgorithmInit,
    BaseEvent,
    CheckpointLoaded,
    EnvRunnersRecreated,
    EvaluateEnd,
    EvaluateStart,
    TrainResult,
)
from hookbus.kernel import Bus, ConfigError, Publisher
from hookbus.metrics import MetricsLogger

from .._errors import AlgorithmStateError, refuse_while_loading_main
from .._loop import in_event_loop
from ..config import DEFAULT_MODULE_ID, AlgorithmConfig
from ..env_runner import EnvRunner, MultiAgentEnvRunner, make_bus
from ..fleet import EnvRunnerGroup
from ._checkpoints import Checkpoints
from ._evaluation import Evaluation
from ._facade import SyncFacade
from ._learner import AnyLearner, Learner, MultiLearner
from ._learning import LearnerSettings, LearnerUpdates, Spaces, learner_settings
from ._lifecycle import Lifecycle
from ._rllib_surface import RLlibSurface
from ._setup import SetupAndStop
from ._structure import check_structure
from ._training import Training
from ._tune import TuneTrainable, watch_for_tune

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


class Algorithm(Training, SetupAndStop, Checkpoints, RLlibSurface, TuneTrainable):
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

    def __init__(
        self,
        config: AlgorithmConfig[Any] | Mapping[str, Any] | None = None,
        env: Any = None,
        logger_creator: Any = None,
        *,
        bus: Bus | None = None,
        **tune_arguments: Any,
    ) -> None:
        """Build the Algorithm, as ``config.build()`` does (set up too, outside a loop).

        As RLlib's: ``config`` is an AlgorithmConfig or a dict of settings (RLlib's keys:
        ``num_env_runners``, ``lr``, ``env_config``, ...; None: the defaults); ``env``, if
        given, sets the env (a registered name, a gymnasium id, an Env class or creator).
        ``logger_creator`` (RLlib's, for Tune's loggers) is accepted and unused: results go
        where ``config.reporting()`` says. Ray Tune builds a trial's Algorithm with
        ``storage=`` (``docs/tune.md``); no other keyword is taken.
        """
        refuse_while_loading_main()  # a worker re-running a script without the main guard
        storage = tune_arguments.pop("storage", None)
        if tune_arguments:
            raise TypeError(
                f"{type(self).__name__}() got unexpected keyword arguments "
                f"{', '.join(map(repr, tune_arguments))}; it takes config, env and bus"
            )
        if storage is not None:  # Ray Tune's trial: Tune's __init__ calls setup()
            self._start_trial(dict(config or {}), storage)
            return
        self._init_algorithm(self.config_for(config, env), bus)

    @classmethod
    def config_for(
        cls, config: AlgorithmConfig[Any] | Mapping[str, Any] | None, env: Any = None
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
        self.config = config
        self._owns_bus = bus is None
        self.bus = make_bus(config, bus, own_logdir=own_logdir)
        """The bus this Algorithm publishes to (shared with its inline runners)."""
        self.metrics = MetricsLogger()
        """The Algorithm's logger: results come from it; handlers get it as metrics_logger."""
        self._training_iteration = 0
        self._counters: defaultdict[str, int] = defaultdict(int)
        """RLlib's counters by name, which RLlib's examples use to keep a curriculum's task
        (``algorithm._counters["current_env_task"]``); hookbus keeps none of its own here
        and does not checkpoint them."""
        self._learner: AnyLearner | None = None
        self._env_runner_group: EnvRunnerGroup | None = None
        self._evaluation: Evaluation | None = None  # built only when something evaluates
        self._lifecycle = Lifecycle.BUILT
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
        if not in_event_loop():
            self._sync.start()

    # --- what subclasses provide (and atraining_step(), in ``Training``) --------------------

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

    # --- acting -----------------------------------------------------------------------------

    def compute_single_action(
        self, observation: Any, *, explore: bool | None = None, policy_id: str | None = None
    ) -> Any:
        """Return the action for one observation (``explore`` defaults to the config's).

        Uses the local runner's exploration, so schedules such as epsilon-greedy apply.
        Multi-agent: ``policy_id`` names the policy that acts (needed with several).
        """
        self._require(Lifecycle.READY, "compute_single_action")
        runner = self.env_runner
        if policy_id is None:
            return runner.compute_single_action(observation, explore=explore)
        if not isinstance(runner, MultiAgentEnvRunner):
            raise ConfigError(f"policy_id={policy_id!r} needs a multi-agent config")
        return runner.compute_single_action(observation, explore=explore, policy_id=policy_id)

    # --- accessors and helpers --------------------------------------------------------------

    @property
    def learner(self) -> AnyLearner:
        """The learner (``build_learner()``'s, or ``config.learner_class``'s; set up first)."""
        if self._learner is None:
            raise AlgorithmStateError(_NOT_SET_UP)
        return self._learner

    @learner.setter
    def learner(self, learner: AnyLearner) -> None:
        self._learner = learner

    @property
    def training_iteration(self) -> int:
        """The training iterations done so far."""
        return self._training_iteration

    @training_iteration.setter
    def training_iteration(self, value: int) -> None:
        self._training_iteration = value

    @property
    def iteration(self) -> int:
        """The training iterations done so far (RLlib's name; ``training_iteration``)."""
        return self.training_iteration

    @property
    def env_runner_group(self) -> EnvRunnerGroup:
        """The training runners: the local one and the remote ones (set up first)."""
        if self._env_runner_group is None:
            raise AlgorithmStateError(_NOT_SET_UP)
        return self._env_runner_group

    @property
    def env_runner(self) -> EnvRunner:
        """The local EnvRunner."""
        return self.env_runner_group.local_env_runner

    @property
    def eval_env_runner_group(self) -> EnvRunnerGroup | None:
        """The evaluation runners (None until something evaluates)."""
        return None if self._evaluation is None else self._evaluation.group

    @property
    def eval_env_runner(self) -> EnvRunner | None:
        """The local evaluation EnvRunner (None until something evaluates)."""
        group = self.eval_env_runner_group
        return None if group is None else group.local_env_runner

    def __repr__(self) -> str:
        # getattr: Tune may show a trial's Algorithm before its setup() has run
        lifecycle = getattr(self, "_lifecycle", Lifecycle.BUILT)
        iteration = getattr(self, "_training_iteration", 0)
        return f"<{type(self).__name__} {lifecycle}, iteration {iteration}>"


watch_for_tune()  # the Algorithm becomes a Tune Trainable when Ray Tune is imported

_NOT_SET_UP = "the Algorithm is not set up yet: use `async with config.build() as algo`"
