"""check_lifecycle on multi-agent streams: the runner's pass; inconsistent agents are named."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from hookbus.events import BaseEvent, EpisodeEnd, EpisodeStart, EpisodeStep
from hookbus.kernel import LifecycleError, Recorder, check_lifecycle, read_recording

sys.path.insert(0, str(Path(__file__).parents[2]))  # tests/: multi_agent_helpers
from multi_agent_helpers import Run, cartpole_run, turn_based_run


@pytest.fixture(scope="module")
def turn_based() -> Run:
    return turn_based_run()


def first(events: list[BaseEvent], event_type: type[BaseEvent]) -> int:
    return next(i for i, e in enumerate(events) if type(e) is event_type)


def edited(run: Run, at: int, **changes: object) -> list[BaseEvent]:
    events = list(run.events)
    events[at] = msgspec.structs.replace(events[at], **changes)
    return events


def check_fails(events: list[BaseEvent], at: int, match: str) -> None:
    with pytest.raises(LifecycleError, match=match) as info:
        check_lifecycle(events, allow_open=False)
    assert info.value.event is events[at]


@pytest.mark.parametrize("make_run", [cartpole_run, turn_based_run])
def test_the_runners_stream_passes(make_run: Callable[[], Run], tmp_path: Path) -> None:
    run = make_run()
    summary = check_lifecycle(run.events, allow_open=False)
    assert (summary.events, summary.episodes, summary.open_episodes) == (len(run.events), 3, 0)
    recorder = Recorder(tmp_path / "run.jsonl", format="jsonl")
    for event in run.events:
        recorder.record(event=event)
    recorder.close()
    assert check_lifecycle(read_recording(tmp_path / "run.jsonl")).episodes == 3


def test_an_action_without_an_observation_is_named(turn_based: Run) -> None:
    at = first(turn_based.events, EpisodeStep)  # "a" acts; "b" has no observation yet
    step = turn_based.events[at]
    assert isinstance(step, EpisodeStep)
    assert step.agents is not None
    agents = [msgspec.structs.replace(a, action=1) if a.agent_id == "b" else a for a in step.agents]
    events = edited(turn_based, at, agents=agents)
    check_fails(events, at, r"episode_step .*agent 'b' acted .* without an observation")


def test_an_agent_joining_twice_at_the_reset_is_named(turn_based: Run) -> None:
    at = first(turn_based.events, EpisodeStart)
    start = turn_based.events[at]
    assert isinstance(start, EpisodeStart)
    assert start.agents is not None
    events = edited(turn_based, at, agents=start.agents * 2)
    check_fails(events, at, "episode_start .*agent 'a' appears twice")


def test_a_step_without_agents_in_a_multi_agent_episode_is_named(turn_based: Run) -> None:
    at = first(turn_based.events, EpisodeStep)
    events = edited(turn_based, at, agents=None)
    check_fails(events, at, "on_episode_step without agents in a multi-agent episode")


def test_a_step_with_agents_in_a_single_agent_episode_is_named(turn_based: Run) -> None:
    at = first(turn_based.events, EpisodeStart)
    events = edited(turn_based, at, agents=None)
    step = first(events, EpisodeStep)
    check_fails(events, step, "on_episode_step with agents in an episode started without them")


def test_an_end_whose_flags_differ_from_the_final_steps_is_named(turn_based: Run) -> None:
    at = first(turn_based.events, EpisodeEnd)
    end = turn_based.events[at]
    assert isinstance(end, EpisodeEnd)
    assert end.truncated
    events = edited(turn_based, at, truncated=False, terminated=True)
    check_fails(events, at, "on_episode_end's terminated/truncated differ from its last step's")


def test_a_final_step_whose_flags_are_not_the_episodes_is_named(turn_based: Run) -> None:
    at = first(turn_based.events, EpisodeEnd) - 1
    events = edited(turn_based, at, terminated=True, truncated=True)
    check_fails(events, at, "on_episode_step's terminated/truncated are not its episode's")
