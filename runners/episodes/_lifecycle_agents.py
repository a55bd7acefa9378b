"""Checking a multi-agent episode's events: their agents, applied to a rebuilt episode."""

from __future__ import annotations

from hookbus.events import EpisodeStart, EpisodeStep

from ._agent_events import apply_reset, apply_step
from ._multi_agent_episode import MultiAgentEpisode

__all__ = ("agents_refused",)


def agents_refused(episode: MultiAgentEpisode, event: EpisodeStart | EpisodeStep) -> str | None:
    """Apply ``event.agents`` (not None) to ``episode``; return why they do not fit, or None.

    The episode refuses what the env could not have returned (an agent acting without an
    observation to act on, an agent back after it left, ...); an agent named twice in one
    event, and a step whose flags are not the episode's, are refused here.
    """
    agents = event.agents
    assert agents is not None  # the caller tested it
    ids = [a.agent_id for a in agents]
    try:
        if len(set(ids)) != len(ids):
            twice = next(i for n, i in enumerate(ids) if i in ids[:n])
            raise ValueError(f"agent {twice!r} appears twice in the event's agents")
        if isinstance(event, EpisodeStart):
            apply_reset(episode, agents)
            return None
        apply_step(episode, agents, event.terminated, event.truncated)
    except ValueError as exc:
        return f"its agents do not fit the multi-agent episode: {exc}"
    if (episode.is_terminated, episode.is_truncated) != (event.terminated, event.truncated):
        return "on_episode_step's terminated/truncated are not its episode's"
    return None
