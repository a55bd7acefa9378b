"""The env-to-module pipeline of a multi-agent run: per agent, as RLlib's.

RLlib binds each piece once to the env's Dict of agent id to observation space (so a
piece's ``recompute_output_observation_space`` gets that Dict and returns one) and calls
``preprocess(observation, episode)`` per agent, with the agent's single-agent episode.
Here the same: each agent's observations go through the pieces in order, then are
flattened if what comes out for the agent is not a Box the module takes as it is
(``is_flat_box``). Episodes, hooks and recordings keep the env's observations, as in a
single-agent run (``_connectors.py``).

A module's input space is the pipeline's output for the first of ``possible_agents``
that maps to it (asked with ``episode=None``, as ``module_spaces`` asks), or for a module
no agent maps to, its ``PolicySpec``'s space, flattened if needed. Every agent that maps
to a module must come out with that module's space: a ConfigError otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np
from gymnasium.spaces import Dict
from numpy.typing import NDArray

from hookbus.kernel import ConfigError

from .._types import AgentID, ModuleID
from ._connectors import (
    Connector,
    FlattenObservations,
    SingleAgentObservationPreprocessor,
    _takes_episode,
    connector_pieces,
)
from ._multi_agent_env import MultiAgentEnv
from ._spaces import Flattener, check_observation_space, is_flat_box

if TYPE_CHECKING:
    from ..episodes import Episode, MultiAgentEpisode

    MappingFn = Callable[[AgentID, MultiAgentEpisode | None], ModuleID]
    """The checked policy mapping function (``config.mapping_fn``)."""

__all__ = ("MultiAgentEnvToModule", "multi_agent_pipeline")

AgentStep = Callable[[Any, Any], Any]
"""``step(observation, agent_episode) -> observation``: one piece, for one agent."""


class _AgentPipeline:
    """One agent's steps; ``flattener`` when they are only a flatten (the fast path)."""

    __slots__ = ("flattener", "steps")

    def __init__(self, steps: list[AgentStep], flattener: Flattener | None) -> None:
        self.steps, self.flattener = steps, flattener

    def one(self, observation: Any, episode: Episode | None) -> Any:
        for step in self.steps:
            observation = step(observation, episode)
        return observation

    def stack(self, observations: Sequence[Any], episode: Episode | None) -> NDArray[Any]:
        if not self.steps:  # a Box agent: its observations as they are
            return np.asarray(observations)
        if self.flattener is not None:
            return self.flattener.stack(observations)
        return np.asarray([self.one(o, episode) for o in observations], dtype=np.float32)


class MultiAgentEnvToModule:
    """Turn each agent's observations into its module's rows (see the module docstring)."""

    def __init__(
        self,
        pieces: Sequence[SingleAgentObservationPreprocessor],
        observation_spaces: dict[Any, gym.Space[Any]],
        action_spaces: dict[Any, gym.Space[Any]],
    ) -> None:
        """Bind ``pieces`` to the agents' spaces, one after the other."""
        agents = list(observation_spaces)
        space: gym.Space[Any] = Dict(dict(observation_spaces))
        steps: dict[Any, list[tuple[AgentStep, Flattener | None]]] = {a: [] for a in agents}
        for piece in pieces:
            if isinstance(piece, FlattenObservations) and not piece.multi_agent:
                raise ConfigError(
                    "FlattenObservations() in a multi-agent run: allowed: "
                    "FlattenObservations(multi_agent=True), with agent_ids= to flatten only "
                    "some agents' observations (as RLlib)"
                )
            space = _bind(piece, space, Dict(dict(action_spaces)), agents)
            for agent_id, agent_steps in steps.items():
                step = _agent_step(piece, agent_id)
                if step is not None:
                    agent_steps.append(step)
        assert isinstance(space, Dict)
        self.observation_spaces: dict[Any, gym.Space[Any]] = {}
        """Per agent: the space of what its module takes."""
        self.module_agents: dict[str, Any] = {}
        """Per module: the agent whose output space is the module's (``_module_spaces``)."""
        self._module_flatteners: dict[str, Flattener] = {}
        self._agents: dict[Any, _AgentPipeline] = {}
        for agent_id in agents:
            self.observation_spaces[agent_id], self._agents[agent_id] = _finish(
                agent_id, space.spaces[agent_id], steps[agent_id]
            )

    def rows(self, keys: Sequence[tuple[Any, Any]], observations: Sequence[Any]) -> NDArray[Any]:
        """Return the module's rows for ``observations``, one per ``(agent_id,
        agent_episode)`` in ``keys``: the sampling loop's, once per module and vector step.

        Rows are made per agent, all of its sub-envs' at once: a flatten of 8 observations
        costs about what a flatten of one does (numpy calls per leaf, not per row).
        """
        groups: dict[Any, list[int]] = {}
        for n, (agent_id, _) in enumerate(keys):
            groups.setdefault(agent_id, []).append(n)
        if len(groups) == 1:  # one agent per module: its rows are the batch
            return self._block(keys[0][0], keys, observations)
        blocks = [
            (at, self._block(agent_id, [keys[n] for n in at], [observations[n] for n in at]))
            for agent_id, at in groups.items()
        ]
        first = blocks[0][1]
        dtype = np.result_type(*(block.dtype for _, block in blocks))
        out = np.empty((len(keys), *first.shape[1:]), dtype=dtype)
        for at, block in blocks:
            out[at] = block
        return out

    def _block(
        self, agent_id: AgentID, keys: Sequence[tuple[Any, Any]], observations: Sequence[Any]
    ) -> NDArray[Any]:
        pipeline = self._agent(agent_id)
        if pipeline.flattener is not None or not pipeline.steps:
            return pipeline.stack(observations, None)  # no piece of the user's: no episode
        rows = zip(keys, observations, strict=True)
        return np.asarray([pipeline.one(o, e) for (_, e), o in rows])

    def one(self, agent_id: AgentID, observation: Any, episode: Episode | None = None) -> Any:
        """Return one observation of ``agent_id`` as its module takes it."""
        return self._agent(agent_id).one(observation, episode)

    def module_one(self, module_id: ModuleID, observation: Any) -> Any:
        """Return one observation as module ``module_id`` takes it, with no agent at hand
        (``compute_single_action``): as the module's first agent's would be."""
        agent_id = self.module_agents.get(module_id)
        if agent_id is not None:
            return self.one(agent_id, observation)
        flattener = self._module_flatteners.get(module_id)
        return observation if flattener is None else flattener.one(observation)

    def stack(
        self, agent_id: AgentID, observations: Sequence[Any], episode: Episode | None
    ) -> NDArray[Any]:
        """Return ``agent_id``'s ``observations`` (its episode's) as module rows [N, ...]."""
        return self._agent(agent_id).stack(observations, episode)

    def _agent(self, agent_id: AgentID) -> _AgentPipeline:
        try:
            return self._agents[agent_id]
        except KeyError:
            raise ConfigError(
                f"agent {agent_id!r} has no observation space among the env's "
                f"possible_agents {list(self._agents)!r}: the env-to-module pipeline needs "
                f"it; list the agent in possible_agents, with its space"
            ) from None


def _bind(
    piece: SingleAgentObservationPreprocessor,
    space: gym.Space[Any],
    action_space: gym.Space[Any],
    agents: list[Any],
) -> gym.Space[Any]:
    out = piece.bind(space, action_space)
    if not isinstance(out, Dict) or set(out.spaces) != set(agents):
        raise ConfigError(
            f"{type(piece).__name__}.recompute_output_observation_space returned {out!r} in a "
            f"multi-agent run: it gets a Dict of agent id to space and must return one with "
            f"the same agents {agents!r}"
        )
    return out


def _agent_step(
    piece: SingleAgentObservationPreprocessor, agent_id: AgentID
) -> tuple[AgentStep, Flattener | None] | None:
    if isinstance(piece, FlattenObservations):
        flattener = piece.agent_flattener(agent_id)
        if flattener is None:
            return None  # not in agent_ids: its observations pass through
        return _flatten_step(flattener), flattener
    preprocess = piece.preprocess
    if _takes_episode(preprocess):
        return preprocess, None
    return (lambda observation, episode: preprocess(observation)), None


def _flatten_step(flattener: Flattener) -> AgentStep:
    one = flattener.one
    return lambda observation, episode: one(observation)


def _finish(
    agent_id: AgentID, space: gym.Space[Any], steps: list[tuple[AgentStep, Flattener | None]]
) -> tuple[gym.Space[Any], _AgentPipeline]:
    """Return the agent's module space and pipeline, flattened at its end if need be."""
    if not is_flat_box(space):
        try:
            check_observation_space(space)
        except ConfigError as exc:
            raise ConfigError(f"agent {agent_id!r}: {exc}") from None
        flattener = Flattener(space)
        steps = [*steps, (_flatten_step(flattener), flattener)]
        space = flattener.observation_space
    only = steps[0][1] if len(steps) == 1 else None
    return space, _AgentPipeline([step for step, _ in steps], only)


def multi_agent_pipeline(
    connector: Connector | None,
    env: MultiAgentEnv,
    raw_spaces: dict[str, tuple[Any, Any]],
    mapping: MappingFn,
) -> tuple[MultiAgentEnvToModule | None, dict[str, tuple[Any, Any]]]:
    """Return the pipeline for ``env`` (a MultiAgentEnv) and each module's spaces.

    ``raw_spaces`` are the modules' spaces as the env has them (``module_spaces``);
    ``mapping`` is the policy mapping function. No pipeline (None: nothing to do per
    step) when there is no connector and every agent's and module's observation space is
    a Box the module takes as it is.
    """
    obs_spaces, act_spaces = _agent_spaces(env)
    env_spaces = (Dict(dict(obs_spaces)), Dict(dict(act_spaces)))
    # RLlib's ``spaces`` argument: the env's spaces, and the modules' (as the env has them).
    spaces = {"__env__": env_spaces, "__env_single__": env_spaces, **raw_spaces}
    pieces = connector_pieces(connector, env, spaces)
    raw_obs = [obs for obs, _ in raw_spaces.values()]
    if not pieces and all(is_flat_box(s) for s in [*obs_spaces.values(), *raw_obs]):
        return None, raw_spaces
    pipeline = MultiAgentEnvToModule(pieces, obs_spaces, act_spaces)
    return pipeline, _module_spaces(pipeline, env.possible_agents, raw_spaces, mapping)


def _agent_spaces(
    env: MultiAgentEnv,
) -> tuple[dict[Any, gym.Space[Any]], dict[Any, gym.Space[Any]]]:
    """Return the observation and action spaces of the env's agents that have both."""
    observations, actions = {}, {}
    for agent_id in env.possible_agents:
        try:
            obs, act = env.get_observation_space(agent_id), env.get_action_space(agent_id)
        except KeyError:  # an agent no module is built from; it fails if it ever acts
            continue
        observations[agent_id], actions[agent_id] = obs, act
    return observations, actions


def _module_spaces(
    pipeline: MultiAgentEnvToModule,
    agents: list[Any],
    raw_spaces: dict[str, tuple[Any, Any]],
    mapping: MappingFn,
) -> dict[str, tuple[Any, Any]]:
    """Return each module's (input observation space, action space); check that every
    agent that maps to a module comes out with that module's input shape."""
    outputs = pipeline.observation_spaces
    mapped = {agent_id: mapping(agent_id, None) for agent_id in agents if agent_id in outputs}
    first: dict[str, Any] = {}
    for agent_id, module_id in mapped.items():
        first.setdefault(module_id, agent_id)
    spaces = {}
    for module_id, (obs, act) in raw_spaces.items():
        if module_id in first:
            obs = outputs[first[module_id]]
            pipeline.module_agents[module_id] = first[module_id]
        elif not is_flat_box(obs):  # a PolicySpec's space, no agent maps to the module
            try:
                flattener = pipeline._module_flatteners[module_id] = Flattener(obs)
            except ConfigError as exc:
                raise ConfigError(f"policy {module_id!r}: {exc}") from None
            obs = flattener.observation_space
        spaces[module_id] = (obs, act)
    for agent_id, module_id in mapped.items():
        want = spaces[module_id][0] if module_id in spaces else None
        if want is not None and outputs[agent_id].shape != want.shape:
            raise ConfigError(
                f"agent {agent_id!r} maps to module {module_id!r}, whose input is "
                f"{want!r} (from agent {first[module_id]!r}), but the env-to-module pipeline "
                f"makes {outputs[agent_id]!r} of its observations; map agents whose "
                f"observations differ in size to different policies"
            )
    return spaces
