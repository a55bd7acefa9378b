"""RLlib's names on the Algorithm: its accessors, modules, state and weights, acting on one
observation, and the names RLlib deprecated.

``RLlibNames`` is a base of ``Algorithm`` holding no state of its own: what it reads of the
Algorithm is declared in it, and made in ``Algorithm._init_algorithm``. These names change
as RLlib's API does (its ``Algorithm`` in ``rllib/algorithms/algorithm.py``), apart from
how hookbus trains; the functions below them read the learner's modules and weights by
module id.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NoReturn

from hookbus.kernel import ConfigError

from .._deprecation import warn_deprecated
from ..config import DEFAULT_MODULE_ID, AlgorithmConfig, MultiRLModuleSpec, RLModuleSpec
from ..env_runner import EnvRunner, MultiAgentEnvRunner
from . import _modules
from ._learner import MultiLearner
from ._lifecycle import Lifecycle
from ._modules import ModuleParts

if TYPE_CHECKING:
    from ..fleet import EnvRunnerGroup
    from ._learner import AnyLearner, Learner
    from ._setup import Setup
    from ._training import Trainer

__all__ = ("RLlibNames",)


class RLlibNames:
    """RLlib's names on the Algorithm (a base of ``Algorithm``; no state of its own)."""

    if TYPE_CHECKING:  # what these read of the Algorithm (its _init_algorithm makes them)
        config: AlgorithmConfig[Any]
        _setup: Setup
        _trainer: Trainer

        def _blocking(self, name: str, twin: str, fn: Callable[..., Any], *args: object) -> Any: ...

        def build_module_learner(
            self,
            module_id: str,
            spec: RLModuleSpec,
            *,
            seed: int,
            config_overrides: Mapping[str, Any] | None = None,
        ) -> Learner[Any]: ...

    @classmethod
    def get_default_config(cls) -> AlgorithmConfig[Any]:
        """Return a new config of this algorithm (RLlib's classmethod): ``PPO`` gives a
        ``PPOConfig()``; a subclass without a config class of its own gets its base's."""
        return _default_config(cls)

    @property
    def learner(self) -> AnyLearner:
        """The learner (``build_learner()``'s, or ``config.learner_class``'s; set up first)."""
        return self._setup.ready_learner()

    @learner.setter
    def learner(self, learner: AnyLearner) -> None:
        self._setup.learner = learner

    def get_module(self, module_id: str = DEFAULT_MODULE_ID) -> Any:
        """Return the learner's module ``module_id`` (RLlib's; the runners act with it)."""
        return _learner_module(self.learner, module_id)

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
        return _learner_weights(self.learner)

    def set_weights(self, weights: dict[str, Any]) -> None:
        """Load weights by module id (as ``get_weights()`` returns them) into the learner;
        the runners act with them from the next iteration (in-process ones at once)."""
        _load_weights(self.learner, weights)

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


def _default_config(algorithm_class: type[Any]) -> AlgorithmConfig[Any]:
    """Return a new config of ``algorithm_class`` (``get_default_config``).

    The config class is the one that names the class as its ``algo_class``, or else the
    nearest base's (a subclass without a config of its own, Tune's wrappers included, gets
    its base's, as RLlib's per-class overrides are inherited).
    """
    # Only a class that sets algo_class itself counts; reading it may load the algorithm's
    # module (PPOConfig's resolves on access, _tune.py).
    configs = [c for c in _subclasses(AlgorithmConfig) if "algo_class" in vars(c)]
    for klass in algorithm_class.__mro__:
        for config_class in configs:
            if config_class.algo_class is klass:
                config: AlgorithmConfig[Any] = config_class()
                return config
    name = algorithm_class.__name__
    raise ConfigError(
        f"no AlgorithmConfig subclass names {name} or a base of it as its algo_class; "
        f"define one (class MyConfig(AlgorithmConfig[{name}]): algo_class = {name})"
    )


def _learner_module(learner: AnyLearner, module_id: str) -> Any:
    """Return the learner's module ``module_id`` (``Algorithm.get_module``), as RLlib 2.60:
    a single-agent run's one module whatever the id, None for an id a multi-agent run
    does not have."""
    module = learner.module
    if isinstance(learner, MultiLearner):
        try:
            return module[module_id]  # type: ignore[index]
        except KeyError:
            return None
    return module


def _learner_weights(learner: AnyLearner) -> dict[str, Any]:
    """Return the learner's weights by module id (``Algorithm.get_weights``)."""
    state: dict[str, Any] = learner.module.get_state()
    if isinstance(learner, MultiLearner):
        return state
    return {DEFAULT_MODULE_ID: state}


def _load_weights(learner: AnyLearner, weights: dict[str, Any]) -> None:
    """Load weights by module id into the learner (``Algorithm.set_weights``)."""
    if isinstance(learner, MultiLearner):
        current = learner.module.get_state()
        learner.module.set_state({**current, **weights})
        return
    unknown = set(weights) - {DEFAULT_MODULE_ID}
    if unknown:
        raise KeyError(
            f"set_weights() got module ids {sorted(unknown)!r}; this single-agent run "
            f"has one module, {DEFAULT_MODULE_ID!r}"
        )
    if DEFAULT_MODULE_ID in weights:
        learner.module.set_state(weights[DEFAULT_MODULE_ID])


def _subclasses(cls: type[Any]) -> list[type[Any]]:
    """Return every subclass of ``cls``, depth first."""
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found
