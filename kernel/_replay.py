"""Replaying recorded events into callbacks, with the episodes rebuilt from the events."""

from __future__ import annotations

import os
import warnings
from collections import OrderedDict
from collections.abc import Collection, Iterable
from typing import Any

from hookbus.events import (
    BaseEvent,
    EnvironmentCreated,
    EpisodeCreated,
    EpisodeEnd,
    EpisodeStart,
    EpisodeStep,
    EvaluateEnd,
    LearnerUpdateEnd,
    PostprocessTrajectory,
    SampleEnd,
    TrainResult,
)
from hookbus.metrics import MetricsLogger

from ._bus import Bus
from ._episode import Episode
from ._errors import ConfigError, HookbusWarning
from ._hooks import event_type_for, live_args_of
from ._learner_loggers import LearnerLoggers
from ._multi_agent_episode import MultiAgentEpisode
from ._read import read_recording
from ._recorded_types import UnknownEvent, unknown_type_error
from ._replay_agents import multi_agent_from, replay_reset, replay_step

__all__ = ("MAX_OPEN_EPISODES", "replay")

AnyEpisode = Episode | MultiAgentEpisode

MAX_OPEN_EPISODES = 10_000
"""How many unfinished episodes replay keeps by default (``max_open_episodes``)."""


async def replay(
    source: str | os.PathLike[str] | Iterable[BaseEvent | UnknownEvent],
    callbacks: object = None,
    *,
    bus: Bus | None = None,
    metrics_logger: MetricsLogger | None = None,
    hooks: Collection[str] | None = None,
    sources: Collection[str] | None = None,
    max_open_episodes: int = MAX_OPEN_EPISODES,
    types: Iterable[type[BaseEvent]] = (),
    **bus_options: Any,
) -> int:
    """Publish a recorded stream again, in order, and return how many events were published.

    ``source`` is a recording's path or any iterable of events. Handlers run on ``bus``, or
    on a bus built from ``callbacks`` and ``bus_options`` exactly as ``config.callbacks(...)``
    builds one (a class, an instance or a list; ``on_error=``; per-hook callables). They get
    the live arguments replay can rebuild: episodes (from the recorded EpisodeCreated, Start,
    Step and End events: returns, lengths, observations, actions, rewards, infos and
    temporary data work; a ``MultiAgentEpisode`` for events carrying ``agents``, though
    ``on_episode_created`` still gets a single-agent placeholder, whose ``custom_data``
    carries over), ``metrics_logger`` (the given one, or a fresh one shared by all
    events), ``samples``, ``result`` and ``evaluation_metrics``; the others (env, env_runner,
    algorithm, rl_module, ...) are None. ``hooks`` and ``sources`` keep only those events,
    though episodes are still rebuilt from every recorded step. Events of your own types
    are published as they were recorded, with no live arguments but ``metrics_logger`` if
    the type takes it; ``types`` are those types, when this process has not defined them
    anyway (nothing is imported by the names a recording's header gives).

    An event of a type this process has not defined (an ``UnknownEvent``, in an iterable
    ``source``) stops replay with one RecordingError naming the type and how to pass it,
    after the events before it were published, unless ``sources`` leaves it out. ``hooks``
    cannot: its hook is not recorded, and a tag does not say it.

    At most ``max_open_episodes`` unfinished episodes are kept (a recording without episode
    ends never finishes any): past that, the least recently active one is dropped, with one
    HookbusWarning per replay, and a later event of it starts a fresh episode.
    """
    if bus is not None and (callbacks is not None or bus_options):
        raise ConfigError("replay() takes either bus= or callbacks (and their options), not both")
    if type(max_open_episodes) is not int or max_open_episodes < 1:
        raise ConfigError(f"max_open_episodes must be an int >= 1, not {max_open_episodes!r}")
    own_bus = bus is None
    bus = bus if bus is not None else Bus(callbacks, **bus_options)
    logger = metrics_logger if metrics_logger is not None else MetricsLogger()
    types = [event_type_for(cls) for cls in types]  # checked before anything is read
    keep_types = None if hooks is None else {event_type_for(h) for h in hooks}
    keep_sources = None if sources is None else set(sources)
    file = None
    if isinstance(source, str | os.PathLike):
        file = os.fspath(source)
        events: Iterable[BaseEvent | UnknownEvent] = read_recording(
            source, types=types, unknown="data"
        )
    else:
        events = source
    rebuilder = _Episodes(max_open_episodes)
    learners = LearnerLoggers(logger)  # the learner hooks' loggers, as the Algorithm's
    count = 0
    try:
        for event in events:
            if isinstance(event, UnknownEvent):
                if keep_sources is not None and event.source not in keep_sources:
                    continue
                raise unknown_type_error(event, file)
            live = rebuilder.live_arguments(event, logger)
            if keep_types is not None and type(event) not in keep_types:
                continue
            if keep_sources is not None and event.source not in keep_sources:
                continue
            learner_logger = learners.for_event(event)
            if learner_logger is not None:
                live["metrics_logger"] = learner_logger
            await bus.publish(event, **live)
            if isinstance(event, LearnerUpdateEnd):
                learners.update_done(event.module_id)
            count += 1
    finally:
        if own_bus:
            bus.close()
    return count


class _Episodes:
    """Rebuild episodes from their events, per source (episode ids are unique anyway)."""

    # Ended episodes are kept for on_postprocess_trajectory and on_sample_end; a recording
    # without sample ends would keep them forever, so only the newest few are kept.
    MAX_FINISHED = 10_000

    def __init__(self, max_open: int) -> None:
        # Unfinished episodes, least recently active first: a recording without episode
        # ends (hooks=["on_episode_start"]) would otherwise grow this without bound.
        self.live: OrderedDict[str, AnyEpisode] = OrderedDict()
        self.max_open = max_open
        self.dropped = 0
        self.finished: OrderedDict[str, AnyEpisode] = OrderedDict()

    def live_arguments(self, event: BaseEvent, logger: MetricsLogger) -> dict[str, Any]:
        """Update the episodes with ``event``; return the live arguments it is published with."""
        if isinstance(event, EpisodeCreated | EpisodeStart | EpisodeStep | EpisodeEnd):
            episode = self._episode_for(event)
            return {"episode": episode, "metrics_logger": logger, "env_index": event.env_index}
        if isinstance(event, PostprocessTrajectory):
            # ``is None``, not ``or``: an episode of no recorded steps has len 0, so is falsy.
            finished = self.finished.get(event.episode_id)
            episode = finished if finished is not None else self._episode_for(event)
            return {"episode": episode, "metrics_logger": logger}
        if isinstance(event, SampleEnd):
            samples = [self._sampled(i) for i in event.episode_ids]
            self.finished.clear()
            return {"metrics_logger": logger, "samples": [s for s in samples if s is not None]}
        if isinstance(event, TrainResult):
            return {"metrics_logger": logger, "result": event.result}
        if isinstance(event, EvaluateEnd):
            return {"metrics_logger": logger, "evaluation_metrics": event.evaluation_metrics}
        if isinstance(event, EnvironmentCreated):
            return {"metrics_logger": logger}
        return {"metrics_logger": logger} if "metrics_logger" in live_args_of(event.hook) else {}

    def _sampled(self, episode_id: str) -> AnyEpisode | None:
        episode = self.finished.pop(episode_id, None)
        return episode if episode is not None else self.live.get(episode_id)

    def _episode_for(self, event: Any) -> AnyEpisode:
        episode = self.live.get(event.episode_id)
        if episode is None:
            if isinstance(event, EpisodeCreated) and event.multi_agent:
                episode = MultiAgentEpisode(event.env_index, event.episode_id)
            else:  # a placeholder in recordings older than the multi_agent flag
                episode = Episode(env_index=event.env_index, id_=event.episode_id)
            self.live[event.episode_id] = episode
            if len(self.live) > self.max_open:
                self._drop_least_recent()
        else:
            self.live.move_to_end(event.episode_id)  # O(1): keeps the LRU order
        # An episode is a MultiAgentEpisode exactly when its start or steps carry agents, so
        # on the single-agent branches ``episode`` is an Episode (mypy cannot know that).
        if isinstance(event, EpisodeStart):
            if event.agents is None:
                episode.add_reset(event.observation, event.info)  # type: ignore[union-attr]
            else:
                episode = self._multi_agent(episode, event)
                replay_reset(episode, event)
        elif isinstance(event, EpisodeStep):  # every step, the last one too (format 2)
            if event.agents is None:
                episode.add_step(  # type: ignore[union-attr]
                    event.observation,
                    event.action,
                    event.reward,
                    event.terminated,
                    event.truncated,
                    event.info,
                )
            else:
                episode = self._multi_agent(episode, event)
                replay_step(episode, event)
        elif isinstance(event, EpisodeEnd):  # no step of its own: it follows the last one
            # Set again from the end, for recordings made without on_episode_step.
            if event.ended_early and isinstance(episode, MultiAgentEpisode):
                episode.truncate()  # as the runner did: its agents leave truncated
            episode.is_terminated, episode.is_truncated = event.terminated, event.truncated
            self.finished[event.episode_id] = self.live.pop(event.episode_id)
            if len(self.finished) > self.MAX_FINISHED:
                self.finished.popitem(last=False)
        return episode

    def _multi_agent(
        self, episode: AnyEpisode, event: EpisodeStart | EpisodeStep
    ) -> MultiAgentEpisode:
        multi = multi_agent_from(episode, event)
        if multi is not episode:
            self.live[event.episode_id] = multi  # the placeholder's place in the LRU order
        return multi

    def _drop_least_recent(self) -> None:
        episode_id, _ = self.live.popitem(last=False)
        self.dropped += 1
        if self.dropped == 1:
            warnings.warn(
                f"replay keeps at most max_open_episodes={self.max_open} unfinished "
                f"episodes and {self.max_open + 1} were open: it dropped the least recently "
                f"active one ({episode_id!r}) and drops more as needed without warning again; "
                "a later event of a dropped episode starts a fresh episode without the steps "
                "before. Record on_episode_end, or pass a larger max_open_episodes",
                HookbusWarning,
                stacklevel=5,  # the caller of replay()
            )
