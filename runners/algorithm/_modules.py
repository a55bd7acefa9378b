"""Modules added and removed while training (RLlib's ``Algorithm.add_module`` and
``remove_module``, which self-play and league training call from ``on_train_result``), and
RLlib's ``Algorithm.set_state`` / ``get_state`` for the module weights.

A change goes, in order, to the learner (a new learner per module, built by the
algorithm's ``build_module_learner``), to the config (thawed and refrozen, as RLlib's: its
``policies``, ``rl_module_spec`` and, if given, the mapping and the modules to train), and
to every runner, training's and evaluation's (``MultiAgentEnvRunner.change_modules``):
in-process ones share the learner's module and config objects; worker processes and Ray
actors get the function by cloudpickle with copies, then the weights. Handles keep the
shared config and module, so a runner restarted later starts with the modules of then.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Callable, Collection, Mapping
from typing import Any, NoReturn, Protocol, runtime_checkable

import numpy as np

from hookbus.kernel import ConfigError

from ..config import (
    AlgorithmConfig,
    MultiRLModuleSpec,
    PolicySpec,
    RLModuleSpec,
    policy_specs,
    set_multi_agent,
)
from ..fleet import EnvRunnerGroup
from ._learner import AnyLearner, Learner
from ._space_data import space_from_data, space_to_data

__all__ = (
    "ModuleParts",
    "add_module",
    "add_saved_modules",
    "check_module_id",
    "get_state",
    "module_records",
    "module_weights",
    "remove_module",
    "remove_saved_modules",
    "set_state",
)

_BAD_ID_CHARACTERS = '<>:"/\\|?*'


@runtime_checkable
class GrowingLearner(Protocol):
    """A multi-module learner that takes and drops modules (``MultiAgentLearner``)."""

    @property
    def learners(self) -> Mapping[str, Any]: ...

    @property
    def module(self) -> Any: ...

    def add_module(self, module_id: str, learner: Any, /) -> None: ...

    def remove_module(self, module_id: str, /) -> Any: ...


@dataclasses.dataclass(frozen=True)
class ModuleParts:
    """What a module change reads of the Algorithm (``Algorithm._module_parts()``)."""

    config: AlgorithmConfig[Any]
    learner: AnyLearner
    group: EnvRunnerGroup
    evaluation: tuple[AlgorithmConfig[Any], Any, EnvRunnerGroup] | None
    """The evaluation runners' config, module and group, once something evaluated."""
    build: Callable[..., Learner[Any]]
    """The algorithm's ``build_module_learner(module_id, spec, *, seed, config_overrides)``."""


def check_module_id(module_id: object) -> None:
    """Raise ValueError for a module id RLlib refuses (it names files in checkpoints)."""
    if not isinstance(module_id, str) or not module_id:
        raise ValueError(f"a module id is a non-empty str, got {module_id!r}")
    bad = [c for c in module_id if c in _BAD_ID_CHARACTERS]
    if bad or module_id[-1] in ". ":
        raise ValueError(
            f"module id {module_id!r} has characters files may not have "
            f"({_BAD_ID_CHARACTERS!r}, or a dot or space at the end)"
        )


def _growing(parts: ModuleParts) -> GrowingLearner:
    learner = parts.learner
    if not isinstance(learner, GrowingLearner) or not parts.config.is_multi_agent:
        raise ConfigError(
            "Can't add or remove an RLModule in a single-agent setup: make the config "
            "multi-agent (config.multi_agent(policies=...), or a MultiRLModuleSpec in "
            "config.rl_module(rl_module_spec=...))"
        )
    return learner


async def add_module(
    parts: ModuleParts,
    module_id: str,
    module_spec: RLModuleSpec,
    *,
    config_overrides: Mapping[str, Any] | None = None,
    new_agent_to_module_mapping_fn: Callable[..., str] | None = None,
    new_should_module_be_updated: Collection[str] | Callable[..., bool] | None = None,
    add_to_learners: bool = True,
    add_to_env_runners: bool = True,
    add_to_eval_env_runners: bool = True,
) -> MultiRLModuleSpec:
    """Add module ``module_id`` built from ``module_spec`` (``Algorithm.add_module``)."""
    check_module_id(module_id)
    learner = _growing(parts)
    if not (add_to_learners or add_to_env_runners or add_to_eval_env_runners):
        raise ValueError(
            "At least one of `add_to_learners`, `add_to_env_runners`, or "
            "`add_to_eval_env_runners` must be set to True!"
        )
    if not add_to_learners:
        raise ConfigError(
            "add_module(add_to_learners=False): hookbus's runners act with the modules the "
            "learner holds (a module that is not trained gets a learner that never updates)"
        )
    if not isinstance(module_spec, RLModuleSpec):
        raise ConfigError(f"add_module() takes an RLModuleSpec, got {module_spec!r}")
    if module_id in learner.learners:
        raise ValueError(f"module {module_id!r} already exists; remove_module() it first")
    spec = _with_spaces(parts, module_id, module_spec)
    seed = parts.config.seed
    seed = int(np.random.default_rng().integers(2**31)) if seed is None else seed
    new = parts.build(
        module_id, spec, seed=seed + len(learner.learners), config_overrides=config_overrides
    )
    # Built: from here on nothing the user gave is checked any more.
    learner.add_module(module_id, new)
    policies = _policies(parts)
    policies[module_id] = PolicySpec(
        spec.observation_space, spec.action_space, config=config_overrides
    )
    multi = _multi_spec(parts.config)
    multi.add_modules({module_id: spec})
    settings = _settings(
        policies, multi, new_agent_to_module_mapping_fn, new_should_module_be_updated
    )
    await _change(parts, settings, {module_id: new.module}, [], add_to_env_runners)
    evaluation = parts.evaluation
    if evaluation is not None and add_to_eval_env_runners:
        config, module, group = evaluation
        own = copy.deepcopy(new.module)  # the evaluation runners' copy, as of the others
        module.add_module(module_id, own)
        set_multi_agent(config, settings)
        add = {module_id: own}
        change = functools.partial(_change_runner, settings=settings, add=add, remove=[])
        await group.aforeach_env_runner(change)
    return multi


async def remove_module(
    parts: ModuleParts,
    module_id: str,
    *,
    new_agent_to_module_mapping_fn: Callable[..., str] | None = None,
    new_should_module_be_updated: Collection[str] | Callable[..., bool] | None = None,
) -> MultiRLModuleSpec:
    """Remove module ``module_id`` everywhere (``Algorithm.remove_module``).

    The runners drop their ongoing episodes (as RLlib's), so no agent of a running episode
    is left with the removed module.
    """
    learner = _growing(parts)
    if module_id not in learner.learners:
        known = ", ".join(map(repr, learner.learners))
        raise KeyError(f"no module {module_id!r} to remove; modules: {known}")
    if len(learner.learners) == 1:
        raise ConfigError(f"cannot remove {module_id!r}, the only module")
    learner.remove_module(module_id)
    policies = _policies(parts)
    del policies[module_id]
    multi = _multi_spec(parts.config)
    multi.remove_modules(module_id)
    train = parts.config.policies_to_train
    if new_should_module_be_updated is None and isinstance(train, Collection):
        if not isinstance(train, str) and module_id in train:
            new_should_module_be_updated = [m for m in train if m != module_id]
    settings = _settings(
        policies, multi, new_agent_to_module_mapping_fn, new_should_module_be_updated
    )
    await _change(parts, settings, {}, [module_id], True)
    evaluation = parts.evaluation
    if evaluation is not None:
        config, module, group = evaluation
        module.remove_module(module_id, raise_err_if_not_found=False)
        set_multi_agent(config, settings)
        change = functools.partial(_change_runner, settings=settings, add={}, remove=[module_id])
        await group.aforeach_env_runner(change)
    return multi


async def _change(
    parts: ModuleParts,
    settings: dict[str, Any],
    add: dict[str, Any],
    remove: list[str],
    to_runners: bool,
) -> None:
    """Set ``settings`` on the config; change the training runners; send the weights."""
    set_multi_agent(parts.config, settings)
    if not to_runners:
        return
    group = parts.group
    change = functools.partial(_change_runner, settings=settings, add=add, remove=remove)
    await group.aforeach_env_runner(change)
    await group.sync_weights(parts.learner.module.get_state())


def _change_runner(
    runner: Any, *, settings: dict[str, Any], add: dict[str, Any], remove: list[str]
) -> None:
    """Change the modules of ``runner`` (where it lives: sent to workers by cloudpickle)."""
    runner.change_modules(settings, add=add, remove=remove)


def _settings(
    policies: dict[str, PolicySpec],
    multi: MultiRLModuleSpec,
    mapping: Callable[..., str] | None,
    should: Collection[str] | Callable[..., bool] | None,
) -> dict[str, Any]:
    settings: dict[str, Any] = {"policies": policies, "rl_module_spec": multi}
    if mapping is not None:
        settings["policy_mapping_fn"] = mapping
    if should is not None:
        settings["policies_to_train"] = should
    return settings


def _policies(parts: ModuleParts) -> dict[str, PolicySpec]:
    """Return the config's policies, each with its module's spaces as the runners have them.

    The config then gives every module's spaces by itself: a runner restarted later builds
    them from it, whatever the new mapping sends (or no longer sends) to each module.
    """
    spaces = parts.group.local_env_runner.get_spaces()
    policies = policy_specs(parts.config)
    for module_id, spec in policies.items():
        if module_id in spaces and (spec.observation_space is None or spec.action_space is None):
            obs_space, act_space = spaces[module_id]
            policies[module_id] = dataclasses.replace(
                spec,
                observation_space=spec.observation_space or obs_space,
                action_space=spec.action_space or act_space,
            )
    return policies


def _multi_spec(config: AlgorithmConfig[Any]) -> MultiRLModuleSpec:
    """Return a copy of the config's MultiRLModuleSpec (a new one if it has none)."""
    spec = config.rl_module_spec
    if isinstance(spec, MultiRLModuleSpec):
        return dataclasses.replace(spec, rl_module_specs=dict(spec.rl_module_specs or {}))
    return MultiRLModuleSpec(rl_module_specs={})


def _with_spaces(parts: ModuleParts, module_id: str, spec: RLModuleSpec) -> RLModuleSpec:
    """Return ``spec`` with its spaces: as given, or those all current modules share."""
    if spec.observation_space is not None and spec.action_space is not None:
        return spec
    spaces = parts.group.local_env_runner.get_spaces()
    pairs = [pair for key, pair in spaces.items() if not key.startswith("__")]
    if not pairs or any(pair != pairs[0] for pair in pairs[1:]):
        raise ConfigError(
            f"add_module({module_id!r}): give the spec's observation_space and action_space "
            f"(the modules there have different ones; RLModuleSpec.from_module(module) "
            f"takes a module's)"
        )
    obs_space, act_space = pairs[0]
    return dataclasses.replace(
        spec,
        observation_space=spec.observation_space or obs_space,
        action_space=spec.action_space or act_space,
    )


# --- what checkpoints keep of the modules, to rebuild added ones in a fresh Algorithm ---


def module_records(parts: ModuleParts) -> dict[str, Any]:
    """Return, by module id, what rebuilds each module of the config's MultiRLModuleSpec
    whose spaces are known (added ones always are): plain data, for checkpoints.

    A module the learner trains is rebuilt from its spaces, ``model_config`` and
    overrides; a class of the user's own is code, so only its name is kept (a restore
    refuses it, naming it).
    """
    multi = parts.config.rl_module_spec
    learners = getattr(parts.learner, "learners", {})
    if not isinstance(multi, MultiRLModuleSpec):
        return {}
    policies = policy_specs(parts.config)
    records = {}
    for module_id in multi.rl_module_specs or {}:
        spec = multi.spec_for(module_id)
        obs_space, act_space = map(space_to_data, (spec.observation_space, spec.action_space))
        if module_id not in learners or obs_space is None or act_space is None:
            continue
        cls = type(learners[module_id].module)
        overrides = policies[module_id].config if module_id in policies else None
        records[module_id] = {
            "module_class": f"{cls.__module__}.{cls.__qualname__}",
            "acts_only": bool(getattr(learners[module_id], "acts_only", False)),
            "observation_space": obs_space,
            "action_space": act_space,
            "model_config": dict(spec.model_config or {}),
            "config_overrides": dict(overrides) if overrides else None,
        }
    return records


async def add_saved_modules(
    parts: ModuleParts, records: Mapping[str, Any], saved_learner: Mapping[str, Any]
) -> list[str]:
    """Add the modules a checkpoint's learner holds and this Algorithm lacks, from the
    checkpoint's ``records``; return their ids (a failed restore removes them again).

    ConfigError for a module the records cannot rebuild: a class of the user's own
    (checkpoints never name code) or one they do not describe.
    """
    learners = getattr(parts.learner, "learners", None)
    if learners is None or not parts.config.is_multi_agent:
        return []  # the learner's structure check names what does not fit
    added: list[str] = []
    try:
        for module_id in saved_learner:
            if module_id in learners:
                continue
            record = records.get(module_id)
            if not isinstance(record, Mapping) or record.get("acts_only"):
                what = (
                    f"of class {record.get('module_class')} " if isinstance(record, Mapping) else ""
                )
                raise ConfigError(
                    f"the checkpoint holds module {module_id!r} {what}which this Algorithm "
                    f"lacks and a checkpoint cannot rebuild (it keeps data, never code): "
                    f"add it first, algo.add_module({module_id!r}, RLModuleSpec(...))"
                )
            try:
                spec = RLModuleSpec(
                    observation_space=space_from_data(record["observation_space"]),
                    action_space=space_from_data(record["action_space"]),
                    model_config=record.get("model_config") or None,
                )
            except (AttributeError, KeyError, TypeError, ValueError) as exc:
                raise ConfigError(
                    f"the checkpoint's record of module {module_id!r} is bad: {exc!r}"
                ) from exc
            await add_module(
                parts, module_id, spec, config_overrides=record.get("config_overrides")
            )
            added.append(module_id)
    except BaseException:
        await remove_saved_modules(parts, added)
        raise
    return added


async def remove_saved_modules(parts: ModuleParts, module_ids: list[str]) -> None:
    """Remove what ``add_saved_modules`` added (a restore that failed)."""
    for module_id in reversed(module_ids):
        await remove_module(parts, module_id)


# --- RLlib's Algorithm.get_state / set_state, for what hookbus holds ----------------------

_LEARNER = ("learner_group", "learner", "rl_module")


def get_state(parts: ModuleParts, training_iteration: int) -> dict[str, Any]:
    """Return RLlib's nested state of the parts hookbus keeps there: the module weights
    (``learner_group/learner/rl_module``, by module id) and ``training_iteration``."""
    weights = parts.learner.module.get_state()
    if not parts.config.is_multi_agent:
        weights = {"default_policy": weights}
    return {
        "learner_group": {"learner": {"rl_module": weights}},
        "training_iteration": training_iteration,
    }


def module_weights(state: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """Return the module weights in RLlib's nested ``state`` (None: it has none).

    ValueError for a part hookbus does not hold there (RLlib's optimizer state, the env
    runners' states, ...), naming it and what hookbus takes.
    """
    unknown = sorted(map(str, set(state) - {"learner_group", "training_iteration"}))
    if unknown:
        _refuse(", ".join(map(repr, unknown)))
    if "learner_group" not in state:
        return None
    node: Any = state["learner_group"]
    for depth, key in enumerate(_LEARNER[1:], start=1):
        if not isinstance(node, Mapping) or set(node) != {key}:
            where = "/".join(_LEARNER[:depth])
            _refuse(f"{where} holding {sorted(node) if isinstance(node, Mapping) else node!r}")
        node = node[key]
    if not isinstance(node, Mapping):
        _refuse(f"rl_module {node!r}")
    return node


async def set_state(parts: ModuleParts, state: Mapping[str, Any]) -> int | None:
    """Load RLlib's nested ``state`` (``Algorithm.set_state``): the module weights of the
    modules it names, sent on to the runners; return its ``training_iteration`` (None if
    it has none). Checked before anything is loaded."""
    weights = module_weights(state)
    iteration = state.get("training_iteration")
    if iteration is not None and (not isinstance(iteration, int) or iteration < 0):
        _refuse(f"training_iteration {iteration!r}")
    if weights is not None:
        module = parts.learner.module
        if parts.config.is_multi_agent:
            module.set_state(dict(weights))  # the modules it names; the others keep theirs
        elif set(weights) - {"default_policy"}:
            _refuse(f"module ids {sorted(weights)!r} in a single-agent run")
        elif weights:
            module.set_state(weights["default_policy"])
        await parts.group.sync_weights(module.get_state())
    return iteration


def _refuse(what: str) -> NoReturn:
    raise ValueError(
        f"set_state() got {what}; hookbus takes RLlib's 'learner_group': {{'learner': "
        f"{{'rl_module': {{module_id: weights}}}}}} and 'training_iteration'"
    )
