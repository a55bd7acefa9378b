"""The multi-agent settings: policies, the agent-to-policy mapping, their checks and spaces.

Functions take the config as ``MultiAgentSettings``, the settings they read: the config
imports these checks, so naming its type here would close an import circle.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from hookbus.kernel import ConfigError

from .._types import AgentID, ModuleID
from ..envs import MultiAgentEnv, resolve_env
from ..episodes import Episode, MultiAgentEpisode
from ._module_spec import MultiRLModuleSpec, RLModuleSpec

__all__ = (
    "DEFAULT_MODULE_ID",
    "DEFAULT_POLICY_ID",
    "MultiAgentSettings",
    "PolicySpec",
    "check_multi_agent",
    "is_multi_agent",
    "mapping_fn",
    "module_spaces",
    "module_spec",
    "policy_specs",
    "set_multi_agent",
    "trains_module",
)

DEFAULT_MODULE_ID = "default_policy"
"""The one module of a single-agent run, and of a MultiAgentEnv run without policies."""
DEFAULT_POLICY_ID = DEFAULT_MODULE_ID
"""RLlib's older name of ``DEFAULT_MODULE_ID`` (``ray.rllib.core`` keeps both, equal)."""


@dataclass(frozen=True)
class PolicySpec:
    """A policy's spaces, when its agents' spaces are not the env's to give, and its own
    learner settings (RLlib's name).

    ``config`` overrides the config's settings for this policy's learner
    (``PPOConfig.overrides(lr=1e-3)``); only the learner's settings take effect there.
    ``policy_class`` is RLlib's old stack: hookbus refuses it (``RLModuleSpec`` acts).
    """

    observation_space: Any = None
    action_space: Any = None
    config: Mapping[str, Any] | None = None
    policy_class: Any = None


class MultiAgentSettings(Protocol):
    """The settings of an ``AlgorithmConfig`` that the multi-agent functions read.

    ``check_multi_agent`` takes them as users set them; the others as it let them pass.
    """

    @property
    def env(self) -> object: ...

    @property
    def policies(self) -> Collection[str] | Mapping[str, PolicySpec | None] | None: ...

    @property
    def policy_mapping_fn(self) -> Callable[..., str] | None: ...

    @property
    def policies_to_train(self) -> Collection[str] | Callable[..., bool] | None: ...

    @property
    def rl_module_spec(self) -> RLModuleSpec | MultiRLModuleSpec | None: ...


def is_multi_agent(config: MultiAgentSettings) -> bool:
    """Tell whether ``config`` trains multi-agent: policies set, or a MultiAgentEnv class."""
    if config.policies is not None or isinstance(config.rl_module_spec, MultiRLModuleSpec):
        return True
    try:
        env = resolve_env(config.env)
    except ConfigError:  # validate() says what is wrong with it
        return False
    return isinstance(env, type) and issubclass(env, MultiAgentEnv)


def policy_specs(config: MultiAgentSettings) -> dict[str, PolicySpec]:
    """Return the policies by id (``{"default_policy": PolicySpec()}`` when none are set;
    a ``MultiRLModuleSpec``'s module ids when it is set and ``policies`` is not)."""
    policies = config.policies
    spec = config.rl_module_spec
    if policies is None and isinstance(spec, MultiRLModuleSpec) and spec.rl_module_specs:
        policies = list(spec.rl_module_specs)
    if policies is None:
        return {DEFAULT_MODULE_ID: PolicySpec()}
    if isinstance(policies, Mapping):
        return {pid: spec or PolicySpec() for pid, spec in policies.items()}
    if isinstance(policies, set | frozenset):
        # A set's order changes from one process to the next (string hashing): sorted, the
        # modules' order (and so their seeds) is the same in every run.
        policies = sorted(policies)
    return {pid: PolicySpec() for pid in policies}


def check_multi_agent(config: MultiAgentSettings) -> None:
    """Raise ConfigError naming the first bad multi-agent setting."""
    policies = config.policies
    if policies is not None:
        if isinstance(policies, str) or not isinstance(policies, Collection) or not policies:
            raise ConfigError(
                f"policies must be a non-empty set or list of policy ids, or a dict of id to "
                f"None or PolicySpec, got {policies!r}"
            )
        for pid in policies:
            if not isinstance(pid, str) or not pid:
                raise ConfigError(f"policy ids must be non-empty strings, got {pid!r}")
        if isinstance(policies, Mapping):
            for pid, spec in policies.items():
                if spec is not None and not isinstance(spec, PolicySpec):
                    raise ConfigError(
                        f"policies[{pid!r}] must be None or a PolicySpec, got {spec!r}"
                    )
                if spec is not None:
                    _check_policy_spec(config, pid, spec)
    _check_module_specs(config)
    fn = config.policy_mapping_fn
    if fn is not None and not callable(fn):
        raise ConfigError(f"policy_mapping_fn must be callable, got {fn!r}")
    train = config.policies_to_train
    if train is not None and not callable(train):
        if isinstance(train, str) or not isinstance(train, Collection):
            raise ConfigError(
                f"policies_to_train must be a collection of policy ids or a function, got {train!r}"
            )
        known = policy_specs(config)
        for pid in train:
            if pid not in known:
                raise ConfigError(
                    f"policies_to_train names {pid!r}, which is not a policy; policies: "
                    f"{', '.join(map(repr, known))}"
                )


def _check_policy_spec(config: MultiAgentSettings, pid: str, spec: PolicySpec) -> None:
    if spec.policy_class is not None:
        raise ConfigError(
            f"policies[{pid!r}]: PolicySpec(policy_class=...) is RLlib's old API stack, "
            f"which hookbus does not have; give the module with config.rl_module("
            f"rl_module_spec=MultiRLModuleSpec(rl_module_specs={{{pid!r}: "
            f"RLModuleSpec(module_class=...)}}))"
        )
    if spec.config is None:
        return
    if not isinstance(spec.config, Mapping):
        raise ConfigError(
            f"policies[{pid!r}]: PolicySpec(config=...) takes a dict of setting overrides "
            f"(AlgorithmConfig.overrides(lr=...)), got {spec.config!r}"
        )
    overrides = getattr(type(config), "overrides", None)
    if overrides is not None:
        try:
            overrides(**spec.config)
        except KeyError as exc:
            raise ConfigError(f"policies[{pid!r}]: PolicySpec(config=...): {exc.args[0]}") from None


def _check_module_specs(config: MultiAgentSettings) -> None:
    spec = config.rl_module_spec
    if not isinstance(spec, MultiRLModuleSpec) or config.policies is None:
        return
    known = policy_specs(config)
    for module_id in spec.rl_module_specs or {}:
        if module_id not in known:
            raise ConfigError(
                f"rl_module_spec names module {module_id!r}, which is not a policy; "
                f"policies: {', '.join(map(repr, known))}"
            )


def module_spec(config: MultiAgentSettings, module_id: str) -> RLModuleSpec | None:
    """Return the ``RLModuleSpec`` that ``config.rl_module(rl_module_spec=...)`` gives
    module ``module_id`` (None: none), its unset fields filled from a MultiRLModuleSpec's."""
    spec = config.rl_module_spec
    if isinstance(spec, MultiRLModuleSpec):
        if module_id not in (spec.rl_module_specs or {}):
            return None
        return spec.spec_for(module_id)
    return spec


def mapping_fn(
    config: MultiAgentSettings,
) -> Callable[[AgentID, MultiAgentEpisode | None], ModuleID]:
    """Return the checked mapping: ``policy_mapping_fn`` whose answer must be a policy id."""
    fn = config.policy_mapping_fn
    known = policy_specs(config)

    def mapped(agent_id: AgentID, episode: MultiAgentEpisode | None) -> ModuleID:
        if fn is None:
            module_id = DEFAULT_MODULE_ID
        else:
            module_id = fn(agent_id, episode)
        if module_id not in known:
            raise ConfigError(
                f"policy_mapping_fn mapped agent {agent_id!r} to {module_id!r}, which is not "
                f"a policy; policies: {', '.join(map(repr, known))}"
            )
        return module_id

    return mapped


def module_spaces(config: MultiAgentSettings, env: MultiAgentEnv) -> dict[str, tuple[Any, Any]]:
    """Return each policy's (observation space, action space).

    A PolicySpec's spaces win, then the policy's RLModuleSpec's; otherwise the spaces of
    the first of ``env.possible_agents`` that the mapping sends to the policy (asked with
    ``episode=None``, as RLlib does). A mapping that cannot answer without an episode
    (self-play's ``hash(episode.id_)``) gives every policy the agents' spaces if all
    agents have the same, as RLlib's do.
    """
    first_agent: dict[str, Any] = {}
    shared = None
    mapped = mapping_fn(config)
    try:
        for agent_id in env.possible_agents:
            first_agent.setdefault(mapped(agent_id, None), agent_id)
    except ConfigError:
        raise
    except Exception as exc:
        shared = _shared_spaces(env)
        if shared is None:
            exc.add_note(
                "hookbus: policy_mapping_fn is asked with episode=None for the policies' "
                "spaces, as RLlib asks it, and the agents' spaces differ; give each policy "
                "its spaces: policies={id: PolicySpec(observation_space=..., action_space=...)}"
            )
            raise
    spaces = {}
    for pid, spec in policy_specs(config).items():
        obs_space, act_space = spec.observation_space, spec.action_space
        rl_spec = module_spec(config, pid)
        if rl_spec is not None:
            obs_space = obs_space or rl_spec.observation_space
            act_space = act_space or rl_spec.action_space
        if (obs_space is None or act_space is None) and shared is not None:
            obs_space, act_space = obs_space or shared[0], act_space or shared[1]
        if obs_space is None or act_space is None:
            if pid not in first_agent:
                raise ConfigError(
                    f"policy {pid!r} has no spaces: no agent of {type(env).__name__} "
                    f"(possible_agents {env.possible_agents!r}) maps to it; give them with "
                    f"policies={{{pid!r}: PolicySpec(observation_space=..., action_space=...)}}"
                )
            agent_id = first_agent[pid]
            try:
                obs_space = obs_space or env.get_observation_space(agent_id)
                act_space = act_space or env.get_action_space(agent_id)
            except KeyError as exc:
                raise ConfigError(f"policy {pid!r}: {exc.args[0]}") from None
        spaces[pid] = (obs_space, act_space)
    return spaces


def set_multi_agent(config: Any, settings: Mapping[str, Any]) -> None:
    """Set ``multi_agent()`` settings and ``rl_module_spec`` on ``config``, frozen or not.

    What ``Algorithm.add_module`` and ``remove_module`` change, as RLlib's do: thaw the
    config, set, freeze it again if it was.
    """
    frozen = config.is_frozen
    object.__setattr__(config, "_is_frozen", False)
    try:
        multi_agent = {k: v for k, v in settings.items() if k != "rl_module_spec"}
        config.multi_agent(**multi_agent)
        if "rl_module_spec" in settings:
            config.rl_module(rl_module_spec=settings["rl_module_spec"])
    finally:
        if frozen:
            config.freeze()


def _shared_spaces(env: MultiAgentEnv) -> tuple[Any, Any] | None:
    """Return the one (observation, action) space pair of all possible agents, if they
    have one (None: they differ, some agent has none, or there are no agents)."""
    pairs = []
    for agent_id in env.possible_agents:
        try:
            pairs.append((env.get_observation_space(agent_id), env.get_action_space(agent_id)))
        except KeyError:
            return None
    if not pairs or any(pair != pairs[0] for pair in pairs[1:]):
        return None
    return pairs[0]


def trains_module(
    config: MultiAgentSettings, module_id: str, batch: Sequence[Episode] | None = None
) -> bool:
    """Tell whether ``policies_to_train`` includes ``module_id`` (all when unset)."""
    train = config.policies_to_train
    if train is None:
        return True
    if callable(train):
        return bool(train(module_id, batch))
    return module_id in train
