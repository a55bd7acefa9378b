"""check_lifecycle keeps bounded state whatever the stream: the first 10,000 sources are
tracked (the events of later ones counted, not checked), at most 10,000 open episodes (the
least recently active dropped past that, and counted), and the most recently ended ones."""

from __future__ import annotations

from typing import Any

import pytest

from hookbus.events import EpisodeCreated, EpisodeEnd, EpisodeStart, EpisodeStep, SampleEnd
from hookbus.kernel import LifecycleError, check_lifecycle

TRACKED = 10_000  # sources, and open episodes (docs/recording.md)


def created(source: str, seq: int, episode_id: str) -> EpisodeCreated:
    return EpisodeCreated(source=source, seq=seq, episode_id=episode_id)


def whole_episode(source: str, seq: int, episode_id: str) -> list[Any]:
    """An episode's events from ``seq`` on: created, started, one final step, ended."""
    return [
        created(source, seq, episode_id),
        EpisodeStart(source=source, seq=seq + 1, episode_id=episode_id),
        EpisodeStep(source=source, seq=seq + 2, episode_id=episode_id, terminated=True),
        EpisodeEnd(source=source, seq=seq + 3, episode_id=episode_id, terminated=True),
    ]


def test_sources_past_the_bound_are_counted_not_checked() -> None:
    events = [created(f"runner:{i}", 0, "e") for i in range(TRACKED + 5)]
    # A broken numbering in a source past the bound: nothing of it is kept to see it.
    events.append(created(f"runner:{TRACKED + 1}", 7, "f"))
    summary = check_lifecycle(events)
    assert summary.events == TRACKED + 6
    assert len(summary.sources) == TRACKED
    assert "runner:0" in summary.sources
    assert f"runner:{TRACKED}" not in summary.sources
    assert summary.unchecked_events == 6
    assert (summary.episodes, summary.open_episodes) == (TRACKED, TRACKED)
    assert summary.dropped_episodes == 0


def test_a_tracked_source_is_still_checked_past_the_bound() -> None:
    events = [created(f"runner:{i}", 0, "e") for i in range(TRACKED + 5)]
    events.append(created("runner:3", 5, "f"))  # its next seq is 1
    with pytest.raises(LifecycleError, match=r"'runner:3' seq 5 .* next one \(1\)"):
        check_lifecycle(events)


def test_open_episodes_past_the_bound_are_dropped_least_recently_active_first() -> None:
    events: list[Any] = [created("runner", i, f"e{i}") for i in range(TRACKED + 3)]
    # e0 is active again before the bound is passed: e1, e2 and e3 are the ones dropped.
    events.insert(TRACKED - 1, EpisodeStart(source="runner", seq=0, episode_id="e0"))
    for seq, event in enumerate(events):
        events[seq] = type(event)(source="runner", seq=seq, episode_id=event.episode_id)
    summary = check_lifecycle(events)
    assert summary.episodes == TRACKED + 3
    assert (summary.open_episodes, summary.dropped_episodes) == (TRACKED, 3)
    # The dropped ones' later events are of episodes the check does not know, and say so.
    late = EpisodeStart(source="runner", seq=len(events), episode_id="e1")
    message = r"on_episode_start before on_episode_created \(or the check dropped it"
    with pytest.raises(LifecycleError, match=message):
        check_lifecycle([*events, late])
    again = EpisodeStep(source="runner", seq=len(events), episode_id="e0", terminated=True)
    check_lifecycle([*events, again])  # e0 was kept: its step is checked, and fine


def test_an_episode_dropped_while_open_is_refused_when_open_episodes_are() -> None:
    events = [created("runner", i, f"e{i}") for i in range(TRACKED + 1)]
    with pytest.raises(LifecycleError) as caught:
        check_lifecycle(events, allow_open=False)
    assert "episode still open at the end (dropped by the check" in str(caught.value)
    # Named by its last event, as the check keeps it: hook, source, seq and episode.
    offender = caught.value.event
    assert (type(offender), offender.source, offender.seq) == (EpisodeCreated, "runner", 0)
    assert offender.episode_id == "e0"


def test_ended_episodes_keep_their_rules_within_the_bound() -> None:
    events: list[Any] = []
    for i in range(50):
        events += whole_episode("runner", len(events), f"e{i}")
    listed = SampleEnd(source="runner", seq=len(events), num_env_steps=50, episode_ids=["e0"])
    summary = check_lifecycle([*events, listed])
    assert (summary.episodes, summary.open_episodes) == (50, 0)
    twice = EpisodeEnd(source="runner", seq=len(events), episode_id="e3", terminated=True)
    with pytest.raises(LifecycleError, match="on_episode_end twice"):
        check_lifecycle([*events, twice])


def test_a_long_run_of_ended_episodes_is_checked_in_bounded_state() -> None:
    # More episodes than the check remembers once ended: each is checked as it goes.
    events: list[Any] = []
    for i in range(TRACKED + 100):
        events += whole_episode("runner", len(events), f"e{i}")
    summary = check_lifecycle(events)
    assert (summary.episodes, summary.open_episodes, summary.dropped_episodes) == (
        TRACKED + 100,
        0,
        0,
    )
    step = EpisodeStep(source="runner", seq=len(events), episode_id=f"e{TRACKED + 99}")
    with pytest.raises(LifecycleError, match="on_episode_step after on_episode_end"):
        check_lifecycle([*events, step])
