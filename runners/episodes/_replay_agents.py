"""Rebuilding multi-agent episodes from the ``agents`` of their start and step events.

``replay`` calls these only for events whose ``agents`` is not None, so single-agent
episodes never pay for them.
"""

from __future__ import annotations

from msgspec import UNSET

from hookbus.events import AgentData, EpisodeStart, EpisodeStep
from hookbus.kernel import LifecycleError

from ._agent_events import apply_reset, apply_step
from ._episode import Episode
from ._multi_agent_episode import MultiAgentEpisode

__all__ = ("multi_agent_from", "replay_reset", "replay_step")


def multi_agent_from(
    episode: Episode | MultiAgentEpisode | None, event: EpisodeStart | EpisodeStep
) -> MultiAgentEpisode:
    """Return the multi-agent episode for ``event``, turning a placeholder into one.

    Replay makes a ``MultiAgentEpisode`` at ``on_episode_created`` when the event says so
    (``multi_agent``); for a stream without that flag it makes an ``Episode`` placeholder,
    whose ``custom_data`` carries over here, the same dict.
    """
    if isinstance(episode, MultiAgentEpisode):
        return episode
    multi = MultiAgentEpisode(event.env_index, event.episode_id)
    if episode is not None:
        multi.custom_data = episode.custom_data
    return multi


def replay_reset(episode: MultiAgentEpisode, event: EpisodeStart) -> None:
    """Apply ``event.agents`` (not None) to ``episode`` as the env's reset."""
    assert event.agents is not None  # the caller tested it
    try:
        apply_reset(episode, event.agents)
    except ValueError as exc:
        raise LifecycleError(f"its agents do not fit the episode: {exc}", event=event) from exc


def replay_step(episode: MultiAgentEpisode, event: EpisodeStep) -> None:
    """Apply ``event.agents`` (not None) to ``episode`` as one env step.

    An agent acting without having joined means the stream lacks this episode's start
    (recorded without ``on_episode_start``, or dropped as least recently active): such
    agents join first with an unknown (None) observation, as a single-agent episode
    rebuilt without its start lacks its first observation.
    """
    agents = event.agents
    assert agents is not None  # the caller tested it
    known = episode.agent_episodes
    unknown = [
        AgentData(agent_id=a.agent_id, module_id=a.module_id, observation=None)
        for a in agents
        if a.action is not UNSET and a.agent_id not in known
    ]
    try:
        if unknown:
            apply_reset(episode, unknown)
        apply_step(episode, agents, event.terminated, event.truncated)
    except ValueError as exc:
        raise LifecycleError(f"its agents do not fit the episode: {exc}", event=event) from exc
