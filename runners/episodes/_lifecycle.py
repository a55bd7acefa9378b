"""The hooks' lifecycle rules: order of an episode's events, samples, results, updates.

``kernel.check_lifecycle`` checks each source's numbering and hands every hook event to
these rules (installed through the entry-point group ``hookbus.rules``). Rules that relate
two hooks (a step needs its ``on_episode_start`` before it) presuppose that both hooks are
in the stream: a stream filtered by hooks holds only some of them, so each break notes
the hooks it presupposes (``Violations.flag``) and counts only if all of them occur.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hookbus.events import (
    BaseEvent,
    CheckpointLoaded,
    EnvironmentCreated,
    EpisodeCreated,
    EpisodeEnd,
    EpisodeStart,
    EpisodeStep,
    LearnerUpdateEnd,
    LearnerUpdateStart,
    PostprocessTrajectory,
    RecordingGap,
    SampleEnd,
    TrainResult,
)
from hookbus.kernel import Violations

from ._gaps import describe_gap
from ._lifecycle_agents import agents_refused
from ._lifecycle_book import EpisodeBook, Key, TrackedEpisode
from ._multi_agent_episode import MultiAgentEpisode

__all__ = ("HookRules",)

ALGORITHM = "algorithm"
"""The source of the Algorithm's events (``on_train_result`` and the other algorithm hooks)."""

# An episode's stages, in the only order they may come.
_CREATED, _STARTED, _ENDED, _POSTPROCESSED = range(4)


@dataclass(slots=True)
class _Source:
    # Its episodes are in the check's EpisodeBook, which bounds them over all sources.
    steps_since_sample: int = 0
    next_iteration: int | None = None
    open_update: LearnerUpdateStart | None = None  # a learner update started, not ended


class HookRules:
    """One check's state: per source, its episodes, samples, results and learner updates."""

    def __init__(self) -> None:
        self.sources: dict[str, _Source] = {}
        self.index = 0  # the position of the event being checked (``Violations.index``)
        self.restart_count = 0
        self.abandoned = 0
        self.violations = Violations()
        self.book = EpisodeBook()

    def flag(self, event: BaseEvent, rule: str, *needs: type[BaseEvent]) -> None:
        self.violations.flag(event, rule, *needs)

    def check(self, event: BaseEvent, violations: Violations) -> None:
        """Check ``event`` (a hook's) against what its source published before."""
        self.violations, self.index = violations, violations.index
        source = self.sources.get(event.source)
        if source is None:
            source = self.sources[event.source] = _Source()
        check = _CHECKS.get(type(event))
        if check is not None:
            check(self, source, event)

    def restarts(self, event: BaseEvent) -> bool:
        """Start a source's new life at a restart marker (docs/recording.md).

        A runner publishes ``on_environment_created`` once per life, so a second one under
        its source means it was restarted after a failure. The episodes its last life left
        open are abandoned, not open; its numbering may start over here (hookbus continues
        it; recordings before it did started again from 0).
        """
        source = self.sources.get(event.source)
        if type(event) is not EnvironmentCreated or source is None:
            return False
        self.restart_count += 1
        self.abandoned += self.book.abandon(event.source)
        source.steps_since_sample = 0
        return True

    # --- episodes ---------------------------------------------------------------------------

    def created(self, source: _Source, event: EpisodeCreated) -> None:
        key = (event.source, event.episode_id)
        if key in self.book:
            self.flag(event, "on_episode_created for an episode the source already has")
            return
        self.book.add(key, TrackedEpisode(_CREATED, event, self.index))

    def started(self, source: _Source, event: EpisodeStart) -> None:
        episode = self.episode(event)
        if episode is None:
            rule = "on_episode_start before on_episode_created" + self.book.unknown_hint()
            self.flag(event, rule, EpisodeCreated)
            episode = TrackedEpisode(_STARTED, event, self.index)
            self.book.add((event.source, event.episode_id), episode)
        elif episode.stage != _CREATED:
            self.flag(event, "on_episode_start twice, or after on_episode_end")
            return
        episode.stage = _STARTED
        if event.agents is not None:
            episode.agents = True
            episode.multi = MultiAgentEpisode(event.env_index, event.episode_id)
            self.check_agents(episode, event)

    def stepped(self, source: _Source, event: EpisodeStep) -> None:
        source.steps_since_sample += 1
        episode = self.episode(event)
        if episode is None or episode.stage == _CREATED:
            rule = "on_episode_step before on_episode_start"
            self.flag(event, rule + self.hint(episode), EpisodeStart)
        elif episode.stage >= _ENDED:
            self.flag(event, "on_episode_step after on_episode_end")
        elif episode.final is not None:
            self.flag(event, "on_episode_step after the step that terminated or truncated")
        else:
            if event.terminated or event.truncated:
                episode.final = (event.terminated, event.truncated)
            if episode.multi is not None:
                self.multi_agent_step(episode, event)
            elif event.agents is not None and episode.stage == _STARTED and not episode.agents:
                rule = "on_episode_step with agents in an episode started without them"
                self.flag(event, rule, EpisodeStart)

    def multi_agent_step(self, episode: TrackedEpisode, event: EpisodeStep) -> None:
        if event.agents is None:
            self.flag(event, "on_episode_step without agents in a multi-agent episode")
            episode.multi = None
        else:
            self.check_agents(episode, event)

    def check_agents(self, episode: TrackedEpisode, event: EpisodeStart | EpisodeStep) -> None:
        assert episode.multi is not None  # the callers tested it
        rule = agents_refused(episode.multi, event)
        if rule is not None:
            self.flag(event, rule)
            episode.multi = None  # checked up to here; its later steps are not

    def ended(self, source: _Source, event: EpisodeEnd) -> None:
        episode = self.episode(event)
        if episode is None or episode.stage == _CREATED:
            rule = "on_episode_end before on_episode_start"
            self.flag(event, rule + self.hint(episode), EpisodeStart)
            return
        if episode.stage >= _ENDED:
            self.flag(event, "on_episode_end twice")
            return
        episode.stage = _ENDED
        episode.multi = None  # its steps are checked; the memory goes
        self.book.end((event.source, event.episode_id))
        last = episode.final
        if event.ended_early:  # a handler ended it: its last step was not final
            if last is not None or not event.truncated or event.terminated:
                rule = "on_episode_end ended_early must follow a non-final step, truncated"
                self.flag(event, rule)
        elif last is None:
            rule = "on_episode_end without a final on_episode_step (terminated or truncated)"
            self.flag(event, rule, EpisodeStep)
        elif last != (event.terminated, event.truncated):
            rule = "on_episode_end's terminated/truncated differ from its last step's"
            self.flag(event, rule, EpisodeStep)

    def postprocessed(self, source: _Source, event: PostprocessTrajectory) -> None:
        episode = self.episode(event)
        if episode is None or episode.stage < _ENDED:
            rule = "on_postprocess_trajectory before on_episode_end"
            self.flag(event, rule + self.hint(episode), EpisodeEnd)
        elif episode.stage == _POSTPROCESSED:
            self.flag(event, "on_postprocess_trajectory twice")
        else:
            episode.stage = _POSTPROCESSED

    def episode(self, event: Any) -> TrackedEpisode | None:
        """Return the tracked episode ``event`` (an episode's) is of, noting it as its last."""
        episode = self.book.get((event.source, event.episode_id))
        if episode is not None:
            episode.saw(event, self.index)
        return episode

    def hint(self, episode: TrackedEpisode | None) -> str:
        """Return why an episode may be unknown besides a broken rule, if it is unknown."""
        return self.book.unknown_hint() if episode is None else ""

    # --- samples and results ----------------------------------------------------------------

    def sampled(self, source: _Source, event: SampleEnd) -> None:
        steps, source.steps_since_sample = source.steps_since_sample, 0
        if event.num_env_steps != steps:
            rule = f"num_env_steps={event.num_env_steps} but the call published {steps} steps"
            self.flag(event, rule, EpisodeStep)
        unknown = [i for i in event.episode_ids if (event.source, i) not in self.book]
        if unknown:
            rule = f"on_sample_end lists episode {unknown[0]!r}, never created by this source"
            self.flag(event, rule + self.book.unknown_hint(), EpisodeCreated)

    def trained(self, source: _Source, event: TrainResult) -> None:
        if event.source != ALGORITHM:
            self.flag(event, f"on_train_result from a source other than {ALGORITHM!r}")
        iteration = event.result.get("training_iteration", event.training_iteration)
        if iteration != event.training_iteration:
            self.flag(event, f"result's training_iteration is {iteration!r}, the event's not")
        elif source.next_iteration is not None and iteration != source.next_iteration:
            self.flag(event, f"training_iteration is not {source.next_iteration}")
        source.next_iteration = event.training_iteration + 1

    # --- learner updates --------------------------------------------------------------------

    def update_started(self, source: _Source, event: LearnerUpdateStart) -> None:
        if source.open_update is not None:
            rule = "on_learner_update_start before the previous update's on_learner_update_end"
            self.flag(event, rule, LearnerUpdateEnd)
        source.open_update = event

    def update_ended(self, source: _Source, event: LearnerUpdateEnd) -> None:
        start, source.open_update = source.open_update, None
        if start is None:
            rule = "on_learner_update_end without its on_learner_update_start"
            self.flag(event, rule, LearnerUpdateStart)
        elif _update_key(start) != _update_key(event):
            rule = "on_learner_update_end's iteration, module or update_index are not its start's"
            self.flag(event, rule, LearnerUpdateStart)

    def restored(self, source: _Source, event: CheckpointLoaded) -> None:
        source.next_iteration = None  # a restored run counts on from its checkpoint's

    # --- what a recording lost ----------------------------------------------------------------

    def gap(self, source: _Source, event: RecordingGap) -> None:
        # A stream with a hole is no whole run: a test replaying it would miss those
        # events, so the gap counts as a break whatever else the stream holds.
        rule = f"{describe_gap(event)}; to check the rest, leave RecordingGap events out"
        self.flag(event, rule)

    # --- the end ----------------------------------------------------------------------------

    def finish(self, violations: Violations, allow_open: bool) -> dict[str, int]:
        """Flag episodes left open (unless ``allow_open``); return the summary's counts."""
        book = self.book
        if not allow_open:
            opened: list[tuple[Key, TrackedEpisode]] = list(book.open.items())
            if book.first_dropped is not None:  # the earliest active of those dropped
                opened.append(book.first_dropped)
            for key, episode in opened:
                rule = "episode still open at the end"
                if key not in book.open:
                    rule += " (dropped by the check, more open at once than it tracks)"
                violations.flag(episode.last_event(key), rule, at=episode.index)
        return {
            "episodes": book.seen,
            "open_episodes": len(book.open),
            "restarts": self.restart_count,
            "abandoned_episodes": self.abandoned,
            "dropped_episodes": book.dropped,
        }


def _update_key(event: LearnerUpdateStart | LearnerUpdateEnd) -> tuple[int, str, int]:
    return event.training_iteration, event.module_id, event.update_index


_CHECKS: dict[type[BaseEvent], Callable[[HookRules, _Source, Any], None]] = {
    EpisodeCreated: HookRules.created,
    EpisodeStart: HookRules.started,
    EpisodeStep: HookRules.stepped,
    EpisodeEnd: HookRules.ended,
    PostprocessTrajectory: HookRules.postprocessed,
    SampleEnd: HookRules.sampled,
    TrainResult: HookRules.trained,
    LearnerUpdateStart: HookRules.update_started,
    LearnerUpdateEnd: HookRules.update_ended,
    CheckpointLoaded: HookRules.restored,
    RecordingGap: HookRules.gap,
}
