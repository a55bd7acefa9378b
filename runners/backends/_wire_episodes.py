"""Episode chunks on the wire: single-agent and multi-agent chunks as arrays (``Sampled``).

Custom data and temporary data stay in the worker. A multi-agent chunk is its agents'
chunks (``WireEpisode``s naming their agent and module) plus what ``MultiAgentEpisode``
keeps beside them: its env steps, the module mapping, and per agent the env steps that
completed each of its transitions, so the rebuilt chunk answers as the worker's did.
"""

from __future__ import annotations

from typing import Any, overload

import msgspec
import numpy as np

from ..episodes import Episode, MultiAgentEpisode

__all__ = (
    "WireEpisode",
    "WireMultiAgentEpisode",
    "episode_from_wire",
    "episode_to_wire",
)


class WireEpisode(msgspec.Struct, kw_only=True, tag="episode"):
    """An episode chunk as arrays; in a multi-agent chunk, one agent's."""

    id: str
    env_index: int
    t_started: int
    observations: Any
    actions: Any
    rewards: Any
    infos: list[dict[str, Any]]
    terminated: bool
    truncated: bool
    agent_id: str | int | None = None
    module_id: str | None = None


class WireMultiAgentEpisode(msgspec.Struct, kw_only=True, tag="multi_agent_episode"):
    """A multi-agent episode chunk: its agents' chunks and what ties them together."""

    id: str
    env_index: int
    t_started: int
    env_steps: int
    """``len()`` of the chunk: its env steps (its agents' steps may be fewer)."""
    terminated: bool
    truncated: bool
    agent_to_module: list[tuple[str | int, str]]
    """``[agent_id, module_id]`` pairs: a list, since JSON and msgpack keys lose int ids."""
    agent_episodes: list[WireEpisode]
    completed_at: list[list[int]]
    """Per agent episode, the env steps (counted in the whole episode) that completed its
    transitions."""


@overload
def episode_to_wire(episode: Episode) -> WireEpisode: ...
@overload
def episode_to_wire(episode: MultiAgentEpisode) -> WireMultiAgentEpisode: ...
def episode_to_wire(
    episode: Episode | MultiAgentEpisode,
) -> WireEpisode | WireMultiAgentEpisode:
    """Pack an episode chunk (single-agent or multi-agent) into arrays."""
    if isinstance(episode, MultiAgentEpisode):
        return _multi_agent_to_wire(episode)
    return WireEpisode(
        id=episode.id_,
        env_index=episode.env_index,
        t_started=episode.t_started,
        observations=_observations(episode.observations),
        actions=np.asarray(episode.actions),
        rewards=np.asarray(episode.rewards, dtype=np.float64),
        infos=episode.infos,
        terminated=episode.is_terminated,
        truncated=episode.is_truncated,
        agent_id=episode.agent_id,
        module_id=episode.module_id,
    )


def _observations(observations: list[Any]) -> Any:
    # One array for array-like observations (Box, Discrete, ...); Dict and Tuple ones cross
    # as a list of their dicts and tuples (their arrays encoded one by one).
    if observations and isinstance(observations[0], dict | tuple):
        return observations
    return np.asarray(observations)


@overload
def episode_from_wire(data: WireEpisode) -> Episode: ...
@overload
def episode_from_wire(data: WireMultiAgentEpisode) -> MultiAgentEpisode: ...
def episode_from_wire(
    data: WireEpisode | WireMultiAgentEpisode,
) -> Episode | MultiAgentEpisode:
    """Unpack an episode chunk sent by ``episode_to_wire``."""
    if isinstance(data, WireMultiAgentEpisode):
        return _multi_agent_from_wire(data)
    episode = Episode.from_steps(
        env_index=data.env_index,
        id_=data.id,
        t_started=data.t_started,
        observations=list(data.observations),
        actions=list(data.actions),
        rewards=data.rewards.tolist(),
        infos=data.infos,
        terminated=data.terminated,
        truncated=data.truncated,
    )
    episode.agent_id, episode.module_id = data.agent_id, data.module_id
    return episode


def _multi_agent_to_wire(episode: MultiAgentEpisode) -> WireMultiAgentEpisode:
    agents = episode.agent_episodes
    return WireMultiAgentEpisode(
        id=episode.id_,
        env_index=episode.env_index,
        t_started=episode.t_started,
        env_steps=len(episode),
        terminated=episode.is_terminated,
        truncated=episode.is_truncated,
        agent_to_module=list(episode.agent_to_module.items()),
        agent_episodes=[episode_to_wire(e) for e in agents.values()],
        completed_at=[episode.completed_at(agent_id) for agent_id in agents],
    )


def _multi_agent_from_wire(data: WireMultiAgentEpisode) -> MultiAgentEpisode:
    agents = [
        (episode_from_wire(wire), completed_at)
        for wire, completed_at in zip(data.agent_episodes, data.completed_at, strict=True)
    ]
    return MultiAgentEpisode.from_chunks(
        id_=data.id,
        env_index=data.env_index,
        t_started=data.t_started,
        env_steps=data.env_steps,
        agent_episodes=agents,
        agent_to_module=dict(data.agent_to_module),
        terminated=data.terminated,
        truncated=data.truncated,
    )
