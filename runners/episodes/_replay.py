"""Replaying the hooks' events: episodes rebuilt from their events, learner loggers per module.

``kernel.replay`` hands every recorded hook event to ``HookReplay`` (installed through the
entry-point group ``hookbus.rules``) and publishes it with the live arguments returned.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from typing import Any

from hookbus.events import (
    BaseEvent,
    EpisodeCreated,
    EpisodeEnd,
    EpisodeStart,
    EpisodeStep,
    EvaluateEnd,
    LearnerUpdateEnd,
    LearnerUpdateStart,
    PostprocessTrajectory,
    RecordingGap,
    SampleEnd,
    TrainResult,
)
from hookbus.kernel import HookbusWarning, ReplayOutcome
from hookbus.metrics import MetricsLogger

from ._episode import Episode
from ._gaps import warn_replayed_gap
from ._learner_loggers import LearnerLoggers
from ._multi_agent_episode import MultiAgentEpisode
from ._replay_agents import multi_agent_from, replay_reset, replay_step
from ._replay_cycles import ReplayCycle, SharedCycle
from ._standins import StandIns

__all__ = ("HookReplay",)

AnyEpisode = Episode | MultiAgentEpisode
EpisodeEvent = EpisodeCreated | EpisodeStart | EpisodeStep | EpisodeEnd | PostprocessTrajectory
"""The events of one episode's hooks: each names its episode and sub-env."""


class HookReplay:
    """Rebuild the hooks' live arguments: episodes from their events, learner loggers."""

    # Ended episodes are kept for on_postprocess_trajectory and on_sample_end; a recording
    # without sample ends would keep them forever, so only the newest few are kept.
    MAX_FINISHED = 10_000

    def __init__(
        self, logger: MetricsLogger, max_open: int, cycle: ReplayCycle | None = None
    ) -> None:
        self.logger = logger
        # Which logger each event's handlers get, and where iterations end: the reduce
        # cycle of the recording's producer (_replay_cycles); by default one logger, pooled.
        self.cycle = cycle if cycle is not None else SharedCycle(logger, reduce=False)
        self.learners = LearnerLoggers(logger)  # the learner hooks' loggers, as the Algorithm's
        # Unfinished episodes, least recently active first: a recording without episode
        # ends (hooks=["on_episode_start"]) would otherwise grow this without bound.
        self.live: OrderedDict[str, AnyEpisode] = OrderedDict()
        self.max_open = max_open
        self.dropped = 0
        self.finished: OrderedDict[str, AnyEpisode] = OrderedDict()
        self.standins = StandIns()  # the Algorithm's, runners' and envs' (_standins.py)

    def live_arguments(self, event: BaseEvent) -> dict[str, Any]:
        """Update the episodes with ``event``; return the live arguments it is published with,
        stand-ins included for the live objects a recording cannot hold."""
        return self.standins.complete(event, self._rebuilt(event))

    def _rebuilt(self, event: BaseEvent) -> dict[str, Any]:
        self.cycle.before(event)
        logger = self.cycle.logger_for(event)
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
        if isinstance(event, LearnerUpdateStart | LearnerUpdateEnd):
            return {"metrics_logger": self.learners.logger(event.module_id)}
        if isinstance(event, RecordingGap):  # the file lost events here: say so (_gaps)
            warn_replayed_gap(event)
        return {"metrics_logger": logger} if "metrics_logger" in event.live_args else {}

    def published(self, event: BaseEvent) -> None:
        """Merge a finished learner update's metrics into the main logger; tell the cycle."""
        if isinstance(event, LearnerUpdateEnd):
            self.learners.update_done(event.module_id)
        self.cycle.after(event)

    def outcome(self) -> ReplayOutcome:
        """Return each iteration's results, as the recording's producer reported them."""
        return self.cycle.outcome()

    def _sampled(self, episode_id: str) -> AnyEpisode | None:
        episode = self.finished.pop(episode_id, None)
        return episode if episode is not None else self.live.get(episode_id)

    def _episode_for(self, event: EpisodeEvent) -> AnyEpisode:
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
