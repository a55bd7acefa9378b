"""check_lifecycle: real recordings pass; each rule, broken by editing one, names the event."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from hookbus.events import (
    EnvironmentCreated,
    EpisodeCreated,
    EpisodeEnd,
    EpisodeStart,
    EpisodeStep,
    PostprocessTrajectory,
    SampleEnd,
    TrainResult,
)
from hookbus.kernel import (
    HookbusError,
    LifecycleError,
    LifecycleSummary,
    Recorder,
    check_lifecycle,
    read_recording,
    read_recording_header,
)
from hookbus.runners import PPOConfig

RUNNER = "env_runner:0"


def record(path: Path, **env_runners: Any) -> Path:
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
        .env_runners(num_envs_per_env_runner=2, **env_runners)
        .callbacks([Recorder(path)])
        .debugging(seed=0)
    )
    with config.build() as algo:
        algo.train()
        algo.train()
    return path


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A recording of two PPO iterations with one local runner of two sub-envs."""
    return record(tmp_path_factory.mktemp("lifecycle") / "run.msgpack")


@pytest.fixture
def events(recorded: Path) -> list[Any]:
    return list(read_recording(recorded))


def renumber(events: Iterable[Any]) -> list[Any]:
    """Number each source's events again from its first seq, so an edit breaks one rule only."""
    next_seq: dict[str, int] = {}
    out = []
    for event in events:
        seq = next_seq.setdefault(event.source, event.seq)
        out.append(msgspec.structs.replace(event, seq=seq))
        next_seq[event.source] = seq + 1
    return out


def first(events: list[Any], test: Callable[[Any], bool], start: int = 0) -> int:
    return next(i for i in range(start, len(events)) if test(events[i]))


def ended_episode(events: list[Any]) -> str:
    return next(e.episode_id for e in events if isinstance(e, EpisodeEnd))


def raises(events: list[Any], match: str, **options: Any) -> Any:
    with pytest.raises(LifecycleError, match=match) as caught:
        check_lifecycle(events, **options)
    return caught.value.event


# --- what passes --------------------------------------------------------------------------


def test_a_recorded_ppo_run_passes(recorded: Path, events: list[Any]) -> None:
    summary = check_lifecycle(read_recording(recorded))
    assert isinstance(summary, LifecycleSummary)
    assert summary.events == len(events)
    assert summary.sources == ("algorithm", RUNNER)
    assert summary.episodes == len({e.episode_id for e in events if isinstance(e, EpisodeStart)})
    assert 0 < summary.open_episodes <= 2  # the two sub-envs' episodes cut by the run's end
    assert check_lifecycle([]) == LifecycleSummary(
        events=0, sources=(), episodes=0, open_episodes=0
    )


def test_a_process_backend_recording_interleaves_sources_and_passes(tmp_path: Path) -> None:
    path = record(tmp_path / "run.msgpack", num_env_runners=2, backend="process")
    summary = check_lifecycle(read_recording(path))
    assert {"algorithm", "env_runner:1", "env_runner:2"} <= set(summary.sources)
    assert summary.episodes > 0
    sources = [e.source for e in read_recording(path) if isinstance(e, EpisodeStep)]
    assert sources != sorted(sources)  # interleaved, not one source after the other


def test_two_sources_interleaved_correctly_pass(events: list[Any]) -> None:
    runner = [e for e in events if e.source == RUNNER]
    other = [msgspec.structs.replace(e, source="env_runner:1", **_renamed(e)) for e in runner]
    mixed = [e for pair in zip(runner, other, strict=True) for e in pair]
    assert check_lifecycle(mixed).sources == (RUNNER, "env_runner:1")


def _renamed(event: Any) -> dict[str, Any]:
    if isinstance(event, SampleEnd):
        return {"episode_ids": [f"{i}-b" for i in event.episode_ids]}
    if hasattr(event, "episode_id"):
        return {"episode_id": f"{event.episode_id}-b"}
    return {}


def test_absent_hooks_are_not_flagged_when_the_stream_says_what_it_holds(
    events: list[Any],
) -> None:
    dropped = (EpisodeCreated, PostprocessTrajectory, EpisodeStep)
    kept = [e for e in events if not isinstance(e, dropped)]
    raises(kept, "seq is not the source's next one")  # as if every hook were recorded
    hooks = ["on_episode_start", "on_episode_end", "on_sample_end", "on_train_result"]
    assert check_lifecycle(kept, hooks=[*hooks, "on_environment_created", "on_algorithm_init"])
    # Renumbered, even without hooks=: starts and ends need no created or steps here.
    assert check_lifecycle(renumber(kept)).events == len(kept)


def test_a_recording_limited_to_some_hooks_passes(tmp_path: Path) -> None:
    path = tmp_path / "ends.jsonl"
    hooks = ["on_episode_end", "on_sample_end"]
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
        .callbacks([Recorder(path, hooks=hooks, format="jsonl"), Recorder(tmp_path / "all")])
    )
    with config.build() as algo:
        algo.train()
    header = read_recording_header(path)
    assert check_lifecycle(read_recording(path), hooks=header.hooks).episodes == 0
    raises(list(read_recording(path)), "seq is not the source's next one")


# --- what fails, and names the event ------------------------------------------------------


def test_a_dropped_step_breaks_the_numbering(events: list[Any]) -> None:
    i = first(events, lambda e: isinstance(e, EpisodeStep))
    following = events[i + 1]
    del events[i]
    assert raises(events, "seq is not the source's next one") == following


def test_a_dropped_step_renumbered_breaks_the_sample_end_count(events: list[Any]) -> None:
    i = first(events, lambda e: isinstance(e, EpisodeStep) and not e.terminated)
    del events[i]
    events = renumber(events)
    offender = raises(events, r"num_env_steps=\d+ but the call published \d+ steps")
    assert isinstance(offender, SampleEnd)


def test_a_dropped_final_step_leaves_the_end_without_one(events: list[Any]) -> None:
    i = first(events, lambda e: isinstance(e, EpisodeStep) and (e.terminated or e.truncated))
    ended = events[i + 1]
    del events[i]
    assert raises(renumber(events), "without a final on_episode_step").episode_id == (
        ended.episode_id
    )


def test_start_before_created(events: list[Any]) -> None:
    i = first(events, lambda e: isinstance(e, EpisodeCreated))
    j = first(
        events, lambda e: isinstance(e, EpisodeStart) and e.episode_id == events[i].episode_id
    )
    events[i], events[j] = events[j], events[i]
    offender = raises(renumber(events), "on_episode_start before on_episode_created")
    assert (offender.hook, offender.episode_id) == ("on_episode_start", events[i].episode_id)


def test_a_duplicated_seq(events: list[Any]) -> None:
    i = first(events, lambda e: isinstance(e, EpisodeStep))
    events.insert(i + 1, events[i])
    assert raises(events, r"seq is not the source's next one \(\d+\)") is events[i]


def test_a_skipped_seq(events: list[Any]) -> None:
    i = first(events, lambda e: isinstance(e, SampleEnd))
    events[i] = msgspec.structs.replace(events[i], seq=events[i].seq + 1)
    with pytest.raises(LifecycleError) as caught:
        check_lifecycle(events)
    error = caught.value
    assert error.event is events[i]
    assert isinstance(error, HookbusError)
    assert str(error) == (
        f"event {RUNNER!r} seq {events[i].seq} on_sample_end breaks the lifecycle: "
        f"seq is not the source's next one ({events[i].seq - 1})"
    )


def test_a_step_after_the_end(events: list[Any]) -> None:
    episode = ended_episode(events)
    step = next(e for e in events if isinstance(e, EpisodeStep) and e.episode_id == episode)
    i = first(events, lambda e: isinstance(e, EpisodeEnd) and e.episode_id == episode)
    events.insert(i + 1, step)
    offender = raises(renumber(events), "on_episode_step after on_episode_end")
    assert (offender.episode_id, offender.source) == (episode, RUNNER)
    assert f"episode {episode!r}" in str(LifecycleError("x", event=offender))


def test_a_step_before_the_start(events: list[Any]) -> None:
    i = first(events, lambda e: isinstance(e, EpisodeStart))
    events.insert(i, EpisodeStep(source=RUNNER, seq=0, episode_id=events[i].episode_id))
    offender = raises(renumber(events), "on_episode_step before on_episode_start")
    assert offender.episode_id == events[i + 1].episode_id


def test_an_end_that_disagrees_with_its_final_step(events: list[Any]) -> None:
    i = first(events, lambda e: isinstance(e, EpisodeEnd))
    end = events[i]
    events[i] = msgspec.structs.replace(end, terminated=not end.terminated)
    raises(events, "terminated/truncated differ from its last step's")


def test_a_sample_end_listing_an_unknown_episode(events: list[Any]) -> None:
    i = first(events, lambda e: isinstance(e, SampleEnd))
    events[i] = msgspec.structs.replace(events[i], episode_ids=["nobody"])
    assert raises(events, "lists episode 'nobody', never created") is events[i]


def test_train_results_come_from_the_algorithm_numbered_by_iteration(events: list[Any]) -> None:
    results = [i for i, e in enumerate(events) if isinstance(e, TrainResult)]
    assert [events[i].training_iteration for i in results] == [1, 2]
    skipped = list(events)
    second = skipped[results[1]]
    skipped[results[1]] = msgspec.structs.replace(
        second, training_iteration=3, result={**second.result, "training_iteration": 3}
    )
    raises(skipped, "training_iteration is not 2")
    moved = list(events)
    moved[results[0]] = msgspec.structs.replace(moved[results[0]], source="env_runner:9", seq=0)
    raises(moved, "on_train_result from a source other than 'algorithm'")


def test_open_episodes_fail_only_when_asked(events: list[Any]) -> None:
    offender = raises(events, "episode still open at the end", allow_open=False)
    assert offender.hook in ("on_episode_step", "on_episode_start")
    complete = [e for e in events if getattr(e, "episode_id", None) != offender.episode_id]
    complete = renumber(complete)
    with pytest.raises(LifecycleError) as caught:
        check_lifecycle(complete, allow_open=False)
    assert caught.value.event.episode_id != offender.episode_id


def test_the_first_offender_is_named_when_several_rules_break(events: list[Any]) -> None:
    i = first(events, lambda e: isinstance(e, SampleEnd))
    events[i] = msgspec.structs.replace(events[i], episode_ids=["nobody"])
    j = first(events, lambda e: isinstance(e, EpisodeStep))
    events.insert(j + 1, events[j])
    assert raises(events, "seq") is events[j + 1]


# --- from the shell -----------------------------------------------------------------------


def hookbus(*argv: str) -> subprocess.CompletedProcess[str]:
    """Run the installed ``hookbus`` command."""
    exe = Path(sys.executable).parent / "hookbus"
    return subprocess.run([exe, *argv], capture_output=True, text=True, timeout=120)


def test_inspect_check_prints_ok(recorded: Path) -> None:
    done = hookbus("inspect", str(recorded), "--episodes", "0", "--check")
    assert done.returncode == 0, done.stderr
    summary = check_lifecycle(read_recording(recorded))
    assert f"lifecycle: ok ({summary.events} events, {summary.episodes} episodes)" in done.stdout


def test_inspect_check_exits_2_naming_the_violation(events: list[Any], tmp_path: Path) -> None:
    path = tmp_path / "broken.msgpack"
    i = first(events, lambda e: isinstance(e, SampleEnd))
    events[i] = msgspec.structs.replace(events[i], episode_ids=["nobody"])
    recorder = Recorder(path)
    for event in events:
        recorder.record(event=event)
    recorder.close()
    done = hookbus("inspect", str(path), "--check")
    assert done.returncode == 2
    assert "events" in done.stdout  # the summary came first
    err = done.stderr.strip().splitlines()
    assert len(err) == 1
    assert "on_sample_end breaks the lifecycle" in err[0]
    assert "'nobody'" in err[0]


# --- restarts ---------------------------------------------------------------------------------

ONE = "env_runner:1"


def first_life(seq: int = 0) -> list[Any]:
    """A runner's life cut short: its env made, an episode started and stepped, no end."""
    return [
        EnvironmentCreated(source=ONE, seq=seq),
        EpisodeCreated(source=ONE, seq=seq + 1, episode_id="a", env_index=0),
        EpisodeStart(source=ONE, seq=seq + 2, episode_id="a", env_index=0),
        EpisodeStep(source=ONE, seq=seq + 3, episode_id="a", env_index=0),
    ]


@pytest.mark.parametrize("second_life_from", [4, 0])  # continued, or from 0 (older recordings)
def test_a_restart_marker_starts_a_sources_new_life(second_life_from: int) -> None:
    stream = [*first_life(), *first_life(second_life_from)]
    stream[-3:] = [msgspec.structs.replace(e, episode_id="b") for e in stream[-3:]]
    summary = check_lifecycle(stream, allow_open=True)
    assert (summary.restarts, summary.abandoned_episodes, summary.open_episodes) == (1, 1, 1)
    assert summary.episodes == 2


def test_without_a_restart_marker_numbering_that_starts_over_is_refused() -> None:
    stream = [*first_life(), *first_life()[1:]]
    with pytest.raises(LifecycleError, match=r"seq is not the source's next one \(4\)"):
        check_lifecycle(stream)


def test_abandoned_episodes_are_not_open_ones() -> None:
    stream = [*first_life(), EnvironmentCreated(source=ONE, seq=4)]
    summary = check_lifecycle(stream, allow_open=False)  # the abandoned one is not refused
    assert (summary.abandoned_episodes, summary.open_episodes) == (1, 0)
    with pytest.raises(LifecycleError, match="episode still open at the end"):
        check_lifecycle(first_life(), allow_open=False)
