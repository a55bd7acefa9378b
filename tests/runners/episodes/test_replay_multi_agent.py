"""replay() rebuilds multi-agent episodes exactly as the runner built them, from either format."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest

from hookbus.events import EpisodeStart, EpisodeStep
from hookbus.kernel import (
    Callback,
    LifecycleError,
    Recorder,
    replay,
)
from hookbus.runners import (
    Episode,
    MultiAgentEpisode,
)

sys.path.insert(0, str(Path(__file__).parents[2]))  # tests/: multi_agent_helpers
from multi_agent_helpers import (
    Run,
    assert_same_episode,
    cartpole_run,
    turn_based_run,
)

pytestmark = pytest.mark.anyio

RUNS = {"cartpole": cartpole_run, "turn_based": turn_based_run}


class Keep(Callback):
    """Keep the episode every episode hook got, and what on_sample_end got."""

    def __init__(self) -> None:
        self.created: list[Any] = []
        self.ended: list[Any] = []
        self.postprocessed: list[Any] = []
        self.samples: list[Any] = []

    def on_episode_created(self, *, episode: Any, **kwargs: Any) -> None:
        episode.custom_data["created"] = True
        self.created.append(episode)

    def on_episode_end(self, *, episode: Any, **kwargs: Any) -> None:
        assert episode.custom_data["created"]
        self.ended.append(episode)

    def on_postprocess_trajectory(self, *, episode: Any, **kwargs: Any) -> None:
        self.postprocessed.append(episode)

    def on_sample_end(self, *, samples: Any, **kwargs: Any) -> None:
        self.samples.extend(samples)


def record(run: Run, path: Path, fmt: str) -> Path:
    recorder = Recorder(path, format=fmt)
    for event in run.events:
        recorder.record(event=event)
    recorder.close()
    return path


@pytest.fixture(params=sorted(RUNS))
def run(request: pytest.FixtureRequest) -> Run:
    return RUNS[request.param]()


@pytest.mark.parametrize("fmt", ["msgpack", "jsonl"])
async def test_a_recording_replays_into_equal_episodes(run: Run, tmp_path: Path, fmt: str) -> None:
    path = record(run, tmp_path / f"run.{fmt}", fmt)
    keep = Keep()
    assert await replay(path, keep) == len(run.events)
    assert len(keep.ended) == len(run.episodes)
    for got, want in zip(keep.ended, run.episodes, strict=True):
        assert_same_episode(got, want)
    assert keep.postprocessed == keep.ended
    assert keep.samples == keep.ended


async def test_events_replay_without_a_recording(run: Run) -> None:
    keep = Keep()
    await replay(run.events, keep)
    for got, want in zip(keep.ended, run.episodes, strict=True):
        assert_same_episode(got, want)


async def test_on_episode_created_gets_a_placeholder_whose_custom_data_carries_over(
    run: Run,
) -> None:
    keep = Keep()
    await replay(run.events, keep)
    assert all(type(e) is Episode for e in keep.created)
    assert all(e.custom_data == {"created": True} for e in keep.ended)


async def test_a_recording_without_steps_gives_the_reset(run: Run, tmp_path: Path) -> None:
    without_steps = Run(events=[e for e in run.events if not isinstance(e, EpisodeStep)])
    keep = Keep()
    await replay(record(without_steps, tmp_path / "run.msgpack", "msgpack"), keep)
    starts = [e for e in run.events if isinstance(e, EpisodeStart)]
    for got, want, start in zip(keep.ended, run.episodes, starts, strict=True):
        assert type(got) is MultiAgentEpisode
        assert len(got) == 0
        assert start.agents is not None
        assert got.agent_ids == [a.agent_id for a in start.agents]
        for agent_id, agent in got.agent_episodes.items():
            want_agent = want.agent_episodes[agent_id]
            assert len(agent.observations) == 1
            np.testing.assert_array_equal(agent.observations[0], want_agent.observations[0])
            assert agent.infos == want_agent.infos[:1]
            assert agent.module_id == want.module_for(agent_id)
        assert (got.is_terminated, got.is_truncated) == (want.is_terminated, want.is_truncated)


async def test_a_recording_without_starts_still_steps_every_agent(run: Run) -> None:
    events = [e for e in run.events if not isinstance(e, EpisodeStart)]
    keep = Keep()
    await replay(events, keep)
    for got, want in zip(keep.ended, run.episodes, strict=True):
        assert type(got) is MultiAgentEpisode
        assert len(got) == len(want)
        assert got.get_return() == pytest.approx(want.get_return())
        assert got.agent_ids == want.agent_ids


async def test_single_agent_events_still_give_episodes() -> None:
    from hookbus.events import EpisodeCreated, EpisodeEnd

    events = [
        EpisodeCreated(source="r", seq=0, episode_id="x"),
        EpisodeStart(source="r", seq=1, episode_id="x", observation=0.0),
        EpisodeStep(
            source="r",
            seq=2,
            episode_id="x",
            action=1,
            reward=2.0,
            observation=1.0,
            terminated=True,
        ),
        EpisodeEnd(source="r", seq=3, episode_id="x", terminated=True),
    ]
    keep = Keep()
    await replay(events, keep)
    (episode,) = keep.ended
    assert type(episode) is Episode
    assert (len(episode), episode.get_return(), episode.is_terminated) == (1, 2.0, True)


async def test_a_step_that_does_not_fit_its_episode_is_named() -> None:
    run = turn_based_run()
    events = list(run.events)
    at = [i for i, e in enumerate(events) if isinstance(e, EpisodeStep)][2]  # "a" acts
    step = events[at]
    assert isinstance(step, EpisodeStep)
    assert step.agents is not None
    acting = [msgspec.structs.replace(a, action=0) if a.agent_id == "b" else a for a in step.agents]
    events[at] = msgspec.structs.replace(step, agents=acting)
    with pytest.raises(LifecycleError, match=r"agent 'b' acted .* without an observation") as info:
        await replay(events, Keep())
    assert info.value.event is events[at]
