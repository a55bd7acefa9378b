"""A multi-agent episode's chunks: the copies ``sample()`` hands out, and RLlib's ``cut()``.

A chunk keeps, per agent, the transitions that completed in its env steps; ``_stamps``
(per agent, the env step that completed each transition) maps env steps to agent steps.
"""

from __future__ import annotations

import bisect
import copy
from time import perf_counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._multi_agent_episode import MultiAgentEpisode

__all__ = ("chunk_of", "successor_of")


def chunk_of(episode: MultiAgentEpisode, start: int) -> MultiAgentEpisode:
    """Return a copy of ``episode``'s env steps from ``start`` on (``MultiAgentEpisode.chunk``)."""
    part = type(episode)(episode.env_index, episode.id_, episode.t_started + start)
    part._mapping_fn = episode._mapping_fn
    part.agent_to_module = episode.agent_to_module
    part.custom_data = episode.custom_data
    part.is_terminated, part.is_truncated = episode.is_terminated, episode.is_truncated
    part._env_t = episode._env_t - start
    for agent_id, agent in episode.agent_episodes.items():
        stamps = episode._stamps[agent_id]
        first = bisect.bisect_right(stamps, start)  # transitions completed by `start`
        if first == len(stamps):
            continue
        part.agent_episodes[agent_id] = agent.chunk(first)
        part._stamps[agent_id] = stamps[first:]
    now = perf_counter()
    part._start_time = episode._start_time if start == 0 else episode._handed_at
    part._end_time = episode._end_time if episode._end_time is not None else now
    episode._handed_at = now
    return part


def successor_of(episode: MultiAgentEpisode, len_lookback_buffer: int) -> MultiAgentEpisode:
    """Return ``episode``'s successor chunk (``MultiAgentEpisode.cut``)."""
    if len_lookback_buffer < 0:
        raise ValueError(f"len_lookback_buffer={len_lookback_buffer!r} must be >= 0")
    if episode.is_done:
        raise RuntimeError(
            f"cannot cut() multi-agent episode {episode.id_}: it is done (terminated or "
            "truncated), so no successor chunk can continue it"
        )
    successor = type(episode)(
        episode.env_index,
        episode.id_,
        episode.env_t,
        agent_to_module_mapping_fn=episode._mapping_fn,
    )
    successor.agent_to_module = dict(episode.agent_to_module)
    successor.custom_data = copy.deepcopy(episode.custom_data)
    horizon = episode._env_t - len_lookback_buffer  # transitions completed after it go along
    for agent_id, agent in episode.agent_episodes.items():
        if agent.is_done:
            continue
        stamps = episode._stamps[agent_id]
        successor.agent_episodes[agent_id] = agent.cut(
            len(stamps) - bisect.bisect_right(stamps, horizon)
        )
        successor._stamps[agent_id] = []
    # What is pending goes on in the successor: who acts next, actions waiting for their
    # agent's next observation, rewards not yet given to a transition.
    successor._to_act = dict(episode._to_act)
    successor._hanging_actions = dict(episode._hanging_actions)
    successor._hanging_rewards = dict(episode._hanging_rewards)
    successor._start_time = perf_counter()
    return successor
