"""A multi-agent reset or step as ``AgentData`` (what runners publish), and back (replay)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from msgspec import UNSET

from hookbus.events import AgentData

from ._multi_agent_episode import ALL_AGENTS, MultiAgentEpisode, _info

__all__ = ("apply_reset", "apply_step", "reset_agents", "step_agents")


def reset_agents(
    episode: MultiAgentEpisode, observations: Mapping[Any, Any], infos: Mapping[Any, Any]
) -> list[AgentData]:
    """Describe a reset for ``EpisodeStart.agents``: each agent's observation and info."""
    return [
        AgentData(
            agent_id=agent_id,
            module_id=episode.module_for(agent_id),
            observation=observation,
            info=_info(infos, agent_id),
        )
        for agent_id, observation in observations.items()
    ]


def step_agents(
    episode: MultiAgentEpisode,
    observations: Mapping[Any, Any],
    actions: Mapping[Any, Any],
    rewards: Mapping[Any, float],
    terminateds: Mapping[Any, bool],
    truncateds: Mapping[Any, bool],
    infos: Mapping[Any, Any],
) -> list[AgentData]:
    """Describe an env step for ``EpisodeStep.agents``: per agent, what each dict held.

    Call it after ``episode.add_env_step`` (agents that joined at this step are mapped).
    """
    ids: dict[Any, None] = {}
    for part in (observations, actions, rewards, terminateds, truncateds, infos):
        ids.update(dict.fromkeys(part))
    ids.pop(ALL_AGENTS, None)
    ids.pop("__common__", None)
    agents = []
    for agent_id in ids:
        fields: dict[str, Any] = {}
        if agent_id in observations:
            fields["observation"] = observations[agent_id]
        if agent_id in actions:
            fields["action"] = actions[agent_id]
        if agent_id in rewards:
            fields["reward"] = float(rewards[agent_id])
        if agent_id in terminateds:
            fields["terminated"] = bool(terminateds[agent_id])
        if agent_id in truncateds:
            fields["truncated"] = bool(truncateds[agent_id])
        if agent_id in infos:
            fields["info"] = _info(infos, agent_id)
        module_id = episode.agent_to_module.get(agent_id, "")
        agents.append(AgentData(agent_id=agent_id, module_id=module_id, **fields))
    return agents


def apply_reset(episode: MultiAgentEpisode, agents: list[AgentData]) -> None:
    """Replay an ``EpisodeStart.agents`` into ``episode`` (the recorded modules kept)."""
    _learn_modules(episode, agents)
    episode.add_env_reset(
        {a.agent_id: a.observation for a in agents},
        {a.agent_id: a.info for a in agents if a.info is not UNSET},
    )


def apply_step(
    episode: MultiAgentEpisode, agents: list[AgentData], terminated: bool, truncated: bool
) -> None:
    """Replay an ``EpisodeStep.agents`` into ``episode``: the dicts the env returned, rebuilt."""
    _learn_modules(episode, agents)
    terminateds: dict[Any, bool] = {ALL_AGENTS: terminated}
    truncateds: dict[Any, bool] = {ALL_AGENTS: truncated}
    observations, actions, rewards, infos = {}, {}, {}, {}
    for a in agents:
        if a.observation is not UNSET:
            observations[a.agent_id] = a.observation
        if a.action is not UNSET:
            actions[a.agent_id] = a.action
        if a.reward is not UNSET:
            rewards[a.agent_id] = a.reward
        if a.terminated is not UNSET:
            terminateds[a.agent_id] = a.terminated
        if a.truncated is not UNSET:
            truncateds[a.agent_id] = a.truncated
        if a.info is not UNSET:
            infos[a.agent_id] = a.info
    episode.add_env_step(observations, actions, rewards, terminateds, truncateds, infos)


def _learn_modules(episode: MultiAgentEpisode, agents: list[AgentData]) -> None:
    for a in agents:
        if a.module_id and a.agent_id not in episode.agent_to_module:
            episode.agent_to_module[a.agent_id] = a.module_id
