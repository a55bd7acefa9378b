"""hookbus inspect and check_lifecycle on hostile recordings: their memory stays within a
small multiple of reading the file, and what they count without keeping is said."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from hookbus.events import EpisodeCreated, EpisodeEnd, EpisodeStart, EpisodeStep
from hookbus.kernel import Recorder
from hookbus.runners.app._cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "kernel"))
from crafted_recordings import genuine_header, write

HOSTILE_EPISODES = 300_000
TRACKED = 10_000  # sources listed and checked, unfinished episodes tallied and tracked


def never_ended(path: Path, episodes: int, *, one_source: bool, producer: str = "") -> Path:
    """Write ``episodes`` episodes that start and never end, each from a source of its own
    (or all from one), with the public Recorder (its header naming ``producer``)."""
    recorder = Recorder(path, producer=producer)
    for i in range(episodes):
        source, seq = ("env_runner:0", i) if one_source else (f"env_runner:{i}", 0)
        recorder.record(event=EpisodeStart(source=source, seq=seq, episode_id=f"{i:x}"))
    recorder.close()
    return path


# Every run imports the same modules first, so that peaks differ only by the work done.
PRELUDE = """
import contextlib, io, resource, sys, warnings
from hookbus.kernel import check_lifecycle, read_recording, replay_into
from hookbus.runners.app._cli import main
path = sys.argv[1]
"""
QUIET = "with contextlib.redirect_stdout(io.StringIO()):\n    assert main(%s) == 0"
WORK = {
    "read_recording": "sum(1 for _ in read_recording(path))",
    "check_lifecycle": "check_lifecycle(read_recording(path))",
    "inspect": QUIET % "['inspect', path]",
    "inspect --check": QUIET % "['inspect', '--check', path]",
    # Replay drops the least recently active of too many open episodes, warning once.
    "replay": "warnings.simplefilter('ignore')\nreplay_into(path, [])",
}
EPILOGUE = "\nprint(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"


def peak_mib(work: str, path: Path) -> float:
    """Return the peak resident memory of a fresh process doing ``work`` on ``path``."""
    code = PRELUDE + WORK[work] + EPILOGUE
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return int(done.stdout.split()[-1]) / 1024  # Linux reports KiB


@pytest.fixture(scope="module", params=["distinct sources", "one source"])
def hostile(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, float]:
    """Give a hostile recording and the peak memory of reading it."""
    folder = tmp_path_factory.mktemp("hostile")
    one = request.param == "one source"
    path = never_ended(folder / "never-ended.msgpack", HOSTILE_EPISODES, one_source=one)
    return path, peak_mib("read_recording", path)


@pytest.mark.parametrize("work", ["check_lifecycle", "inspect", "inspect --check"])
def test_memory_stays_within_a_small_multiple_of_reading(
    hostile: tuple[Path, float], work: str
) -> None:
    # Bounded, each stays within 1.1 times the reader's peak (which holds the interpreter
    # and the imports, about 55 MiB). Keeping every source and episode, these 300k took
    # 1.8 (inspect, one source) to 6.9 (inspect --check, distinct sources) times it, and
    # more with more episodes: 1.5 tells the two apart with room for noise.
    path, reading = hostile
    assert peak_mib(work, path) <= 1.5 * reading


@pytest.mark.parametrize("producer", ["", "rllib"])
def test_replay_stays_within_a_small_multiple_of_reading(tmp_path: Path, producer: str) -> None:
    # Replay keeps at most 10,000 open episodes, runner stand-ins and (for RLlib's cycle)
    # runner loggers. Keeping one of each per source, 300k sources took 375 MiB (442 with
    # RLlib's cycle) against 42 MiB to read; bounded, 64 and 68 MiB.
    path = never_ended(
        tmp_path / "r.msgpack", HOSTILE_EPISODES, one_source=False, producer=producer
    )
    assert peak_mib("replay", path) <= 2 * peak_mib("read_recording", path)


def test_inspect_lists_the_first_sources_and_counts_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = never_ended(tmp_path / "many.msgpack", TRACKED + 5, one_source=False)
    assert main(["inspect", "--check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "env_runner:0 " in out
    assert f"env_runner:{TRACKED} " not in out
    assert f"... 5 events of sources past the first {TRACKED:,} (counted, not listed)" in out
    assert f"  5 events of sources past the first {TRACKED:,} were counted, not checked" in out
    assert f"episodes: 0 finished, {TRACKED + 5} unfinished" in out
    assert "(5 episodes were dropped from the tallies" in out
    assert f"lifecycle: ok ({TRACKED + 5} events, {TRACKED} episodes)" in out


def test_inspect_tallies_the_most_recent_unfinished_episodes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "open.msgpack"
    recorder = Recorder(path)
    for i in range(TRACKED + 3):  # e0, e1 and e2 are dropped from the tallies
        recorder.record(event=EpisodeStart(source="r", seq=i, episode_id=f"e{i}"))
    last = f"e{TRACKED + 2}"
    recorder.record(event=EpisodeStep(source="r", episode_id=last, reward=2.5, terminated=True))
    recorder.record(event=EpisodeEnd(source="r", episode_id=last, terminated=True))
    recorder.record(event=EpisodeEnd(source="r", episode_id="e0", terminated=True))
    recorder.close()
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"episodes: 2 finished, {TRACKED + 1} unfinished" in out
    assert "(3 episodes were dropped from the tallies" in out
    assert "the 1 of them that finished are not in the figures below" in out
    assert "return mean 2.50 (min 2.5, max 2.5); length mean 1.0 (min 1, max 1)" in out


def test_a_hook_the_header_names_unknown_is_said_to_come_from_the_header(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "typo.msgpack"
    header = genuine_header(tmp_path)
    header["hooks"] = ["on_episode_created", "on_episode_ned"]
    write(path, header, [EpisodeCreated(source="r", seq=0, episode_id="e")])
    assert main(["inspect", str(path)]) == 0  # the summary is still worth seeing
    out = capsys.readouterr().out
    assert "hooks recorded: on_episode_created, on_episode_ned" in out
    assert "named in the header but not known hooks here: 'on_episode_ned'" in out
    assert main(["inspect", "--check", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert (
        "hook 'on_episode_ned' named in the file's header is not a known hook (did you mean "
        "'on_episode_end'?)"
    ) in err
    assert "give the type with --types" in err


def test_the_bounded_summary_keeps_the_figures_of_finished_episodes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "done.msgpack"
    recorder = Recorder(path)
    seq = 0
    for i, rewards in enumerate([[1.0, 2.0], [5.0], [0.5, 0.5, 0.5]]):
        events = [EpisodeStart(episode_id=f"e{i}")]
        events += [EpisodeStep(episode_id=f"e{i}", reward=r) for r in rewards]
        events.append(EpisodeEnd(episode_id=f"e{i}", truncated=True))
        for event in events:
            recorder.record(event=msgspec.structs.replace(event, source="r", seq=seq))
            seq += 1
    recorder.close()
    assert main(["inspect", "--episodes", "2", str(path)]) == 0
    out = capsys.readouterr().out
    assert "episodes: 3 finished, 0 unfinished" in out
    assert "return mean 3.17 (min 1.5, max 5); length mean 2.0 (min 1, max 3)" in out
    assert "e0  r                len     2  return      3.00  truncated" in out
    assert "  ... 1 more" in out
