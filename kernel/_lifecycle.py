"""Checking that an event stream keeps the hook contract: order, numbering, episodes' lives.

One pass, per source, over any iterable of events (a recording, a list, what a stream got).
Rules that relate two hooks (a step needs its ``on_episode_start`` before it) presuppose
that both hooks are in the stream: a stream filtered by hooks holds only some of them, so
each violation notes the hooks it presupposes and counts only if all of them occur in the
stream. That is known only at its end, so the whole stream is read and then the first
violation that counts is raised.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from hookbus.events import (
    HOOKS,
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
    SampleEnd,
    TrainResult,
)

from ._errors import LifecycleError
from ._hooks import hook_name
from ._lifecycle_agents import agents_refused
from ._multi_agent_episode import MultiAgentEpisode

__all__ = ("LifecycleSummary", "check_lifecycle")

_HOOK_TYPES = frozenset(HOOKS.values())

ALGORITHM = "algorithm"
"""The source of the Algorithm's events (``on_train_result`` and the other algorithm hooks)."""

# An episode's stages, in the only order they may come.
_CREATED, _STARTED, _ENDED, _POSTPROCESSED = range(4)


@dataclass(frozen=True)
class LifecycleSummary:
    """What ``check_lifecycle`` checked: counts to assert on."""

    events: int
    """Events read."""
    sources: tuple[str, ...]
    """The sources seen, sorted."""
    episodes: int
    """Episodes seen (created or started), over all sources."""
    open_episodes: int
    """Of those, episodes without ``on_episode_end`` when the stream ended."""
    user_events: int = 0
    """Events of your own types among ``events``: read, and left unchecked."""
    restarts: int = 0
    """Restart markers read: an ``on_environment_created`` from a source seen before (a
    runner restarted after a failure, under its source)."""
    abandoned_episodes: int = 0
    """Episodes a restart left open (their runner failed mid-episode); among ``episodes``,
    not among ``open_episodes``."""


class _Violation(NamedTuple):
    at: int
    event: BaseEvent
    rule: str
    needs: frozenset[type[BaseEvent]]


@dataclass
class _Episode:
    stage: int
    last: BaseEvent
    index: int
    steps: int = 0
    final_step: EpisodeStep | None = None  # the step that said terminated or truncated
    # A multi-agent episode, rebuilt from its events' agents to check them (from its start
    # to its end, or to its first inconsistent step); None for single-agent episodes.
    multi: MultiAgentEpisode | None = None
    agents: bool = False  # whether its on_episode_start had agents


@dataclass
class _Source:
    next_seq: int
    episodes: dict[str, _Episode] = field(default_factory=dict)
    steps_since_sample: int = 0
    next_iteration: int | None = None
    open_update: LearnerUpdateStart | None = None  # a learner update started, not ended


class _Checker:
    def __init__(self, gaps_allowed: bool) -> None:
        self.gaps_allowed = gaps_allowed
        self.sources: dict[str, _Source] = {}
        self.present: set[type[BaseEvent]] = set()
        # The first violation for each set of presupposed hooks: the one raised is among them.
        self.violations: dict[frozenset[type[BaseEvent]], _Violation] = {}
        self.index = 0
        self.user_events = 0
        self.restarts = 0
        self.abandoned = 0

    def flag(self, event: BaseEvent, rule: str, *needs: type[BaseEvent]) -> None:
        key = frozenset(needs)
        if key not in self.violations:
            self.violations[key] = _Violation(self.index, event, rule, key)

    def add(self, event: BaseEvent) -> None:
        if type(event) not in _HOOK_TYPES:  # an event type of yours: no rule is about it
            self.user_events += 1
            self.index += 1
            return
        self.present.add(type(event))
        source = self.sources.get(event.source)
        if source is None:
            source = self.sources[event.source] = _Source(next_seq=event.seq)
        elif type(event) is EnvironmentCreated:
            self.restarted(source, event)
        self.check_seq(source, event)
        check = _CHECKS.get(type(event))
        if check is not None:
            check(self, source, event)
        self.index += 1

    def check_seq(self, source: _Source, event: BaseEvent) -> None:
        expected = source.next_seq
        if event.seq < expected or (event.seq > expected and not self.gaps_allowed):
            self.flag(event, f"seq is not the source's next one ({expected})")
        source.next_seq = event.seq + 1

    def restarted(self, source: _Source, event: EnvironmentCreated) -> None:
        """Start a source's new life: a restart marker (docs/recording.md).

        A runner publishes ``on_environment_created`` once per life, so a second one under
        its source means it was restarted after a failure. The episodes its last life left
        open are abandoned, not open; its numbering may start over here (hookbus continues
        it; recordings before it did started again from 0).
        """
        self.restarts += 1
        for episode_id, episode in list(source.episodes.items()):
            if episode.stage < _ENDED:
                del source.episodes[episode_id]
                self.abandoned += 1
        source.next_seq = event.seq
        source.steps_since_sample = 0

    # --- episodes ---------------------------------------------------------------------------

    def created(self, source: _Source, event: EpisodeCreated) -> None:
        if event.episode_id in source.episodes:
            self.flag(event, "on_episode_created for an episode the source already has")
            return
        source.episodes[event.episode_id] = _Episode(_CREATED, event, self.index)

    def started(self, source: _Source, event: EpisodeStart) -> None:
        episode = self.episode(source, event)
        if episode is None:
            self.flag(event, "on_episode_start before on_episode_created", EpisodeCreated)
            episode = source.episodes[event.episode_id] = _Episode(_STARTED, event, self.index)
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
        episode = self.episode(source, event)
        if episode is None or episode.stage == _CREATED:
            self.flag(event, "on_episode_step before on_episode_start", EpisodeStart)
        elif episode.stage >= _ENDED:
            self.flag(event, "on_episode_step after on_episode_end")
        elif episode.final_step is not None:
            self.flag(event, "on_episode_step after the step that terminated or truncated")
        else:
            episode.steps += 1
            if event.terminated or event.truncated:
                episode.final_step = event
            if episode.multi is not None:
                self.multi_agent_step(episode, event)
            elif event.agents is not None and episode.stage == _STARTED and not episode.agents:
                rule = "on_episode_step with agents in an episode started without them"
                self.flag(event, rule, EpisodeStart)

    def multi_agent_step(self, episode: _Episode, event: EpisodeStep) -> None:
        if event.agents is None:
            self.flag(event, "on_episode_step without agents in a multi-agent episode")
            episode.multi = None
        else:
            self.check_agents(episode, event)

    def check_agents(self, episode: _Episode, event: EpisodeStart | EpisodeStep) -> None:
        assert episode.multi is not None  # the callers tested it
        rule = agents_refused(episode.multi, event)
        if rule is not None:
            self.flag(event, rule)
            episode.multi = None  # checked up to here; its later steps are not

    def ended(self, source: _Source, event: EpisodeEnd) -> None:
        episode = self.episode(source, event)
        if episode is None or episode.stage == _CREATED:
            self.flag(event, "on_episode_end before on_episode_start", EpisodeStart)
            return
        if episode.stage >= _ENDED:
            self.flag(event, "on_episode_end twice")
            return
        episode.stage = _ENDED
        episode.multi = None  # its steps are checked; the memory goes
        last = episode.final_step
        if event.ended_early:  # a handler ended it: its last step was not final
            if last is not None or not event.truncated or event.terminated:
                rule = "on_episode_end ended_early must follow a non-final step, truncated"
                self.flag(event, rule)
        elif last is None:
            rule = "on_episode_end without a final on_episode_step (terminated or truncated)"
            self.flag(event, rule, EpisodeStep)
        elif (last.terminated, last.truncated) != (event.terminated, event.truncated):
            rule = "on_episode_end's terminated/truncated differ from its last step's"
            self.flag(event, rule, EpisodeStep)

    def postprocessed(self, source: _Source, event: PostprocessTrajectory) -> None:
        episode = self.episode(source, event)
        if episode is None or episode.stage < _ENDED:
            self.flag(event, "on_postprocess_trajectory before on_episode_end", EpisodeEnd)
        elif episode.stage == _POSTPROCESSED:
            self.flag(event, "on_postprocess_trajectory twice")
        else:
            episode.stage = _POSTPROCESSED

    def episode(self, source: _Source, event: BaseEvent) -> _Episode | None:
        episode = source.episodes.get(event.episode_id)  # type: ignore[attr-defined]
        if episode is not None:
            episode.last, episode.index = event, self.index
        return episode

    # --- samples and results ----------------------------------------------------------------

    def sampled(self, source: _Source, event: SampleEnd) -> None:
        steps, source.steps_since_sample = source.steps_since_sample, 0
        if event.num_env_steps != steps:
            rule = f"num_env_steps={event.num_env_steps} but the call published {steps} steps"
            self.flag(event, rule, EpisodeStep)
        unknown = [i for i in event.episode_ids if i not in source.episodes]
        if unknown:
            rule = f"on_sample_end lists episode {unknown[0]!r}, never created by this source"
            self.flag(event, rule, EpisodeCreated)

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

    # --- the end ----------------------------------------------------------------------------

    def first_violation(self, allow_open: bool) -> _Violation | None:
        if not allow_open:
            for source in self.sources.values():
                for episode in source.episodes.values():
                    if episode.stage < _ENDED:
                        self.flag_open(episode)
        counted = [v for v in self.violations.values() if v.needs <= self.present]
        return min(counted, key=lambda v: v.at, default=None)

    def flag_open(self, episode: _Episode) -> None:
        violation = _Violation(episode.index, episode.last, "episode still open at the end", _NONE)
        first = self.violations.get(_NONE)
        if first is None or violation.at < first.at:
            self.violations[_NONE] = violation


_NONE: frozenset[type[BaseEvent]] = frozenset()


def _update_key(event: LearnerUpdateStart | LearnerUpdateEnd) -> tuple[int, str, int]:
    return event.training_iteration, event.module_id, event.update_index


_CHECKS: dict[type[BaseEvent], Callable[[_Checker, _Source, Any], None]] = {
    EpisodeCreated: _Checker.created,
    EpisodeStart: _Checker.started,
    EpisodeStep: _Checker.stepped,
    EpisodeEnd: _Checker.ended,
    PostprocessTrajectory: _Checker.postprocessed,
    SampleEnd: _Checker.sampled,
    TrainResult: _Checker.trained,
    LearnerUpdateStart: _Checker.update_started,
    LearnerUpdateEnd: _Checker.update_ended,
    CheckpointLoaded: _Checker.restored,
}


def check_lifecycle(
    events: Iterable[BaseEvent],
    *,
    hooks: Collection[str] | None = None,
    allow_open: bool = True,
) -> LifecycleSummary:
    """Check that ``events`` keep the hook contract, per source; return what was checked.

    ``events`` is any iterable of events in publication order: ``read_recording(path)``, a
    list, or what a stream or a handler got from a live bus. Raises ``LifecycleError``
    naming the first event that breaks a rule (docs/recording.md lists them). ``hooks`` are
    the hooks the stream was limited to (a recording header's ``hooks``), if it was: then
    ``seq`` need only increase, since the other hooks' events took numbers too. A rule
    relating two hooks is checked only if both occur in the stream. ``allow_open=False``
    also refuses episodes without ``on_episode_end`` when the stream ends. Events of your own
    types are read and counted (``user_events``), never checked: the rules are the hooks'.
    A source's numbering is checked over its hook events, so publish yours under a source
    of their own. A second ``on_environment_created`` from one source marks a restart of
    its runner: the episodes it left open are counted as ``abandoned_episodes``, and its
    numbering may start over there.
    """
    if hooks is not None:
        hooks = [hook_name(hook) for hook in hooks]  # a bad name is a ConfigError
    checker = _Checker(gaps_allowed=hooks is not None and not HOOKS.keys() <= set(hooks))
    for event in events:
        checker.add(event)
    violation = checker.first_violation(allow_open)
    if violation is not None:
        raise LifecycleError(violation.rule, event=violation.event)
    episodes = [e for s in checker.sources.values() for e in s.episodes.values()]
    return LifecycleSummary(
        events=checker.index,
        sources=tuple(sorted(checker.sources)),
        episodes=len(episodes) + checker.abandoned,
        open_episodes=sum(e.stage < _ENDED for e in episodes),
        user_events=checker.user_events,
        restarts=checker.restarts,
        abandoned_episodes=checker.abandoned,
    )
