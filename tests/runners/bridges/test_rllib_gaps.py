"""A remote EnvRunner killed between its sampling and the driver's take: the recording
says so (a RecordingGap, a HookbusWarning), and check_lifecycle, replay and inspect report it.

The kill is real: ``KillsRunner`` (an RLlib callback RLlib calls before the bridge's, at
``on_train_result``) sends SIGKILL to runner 2's process after it sampled iteration 2.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from hookbus.events import BaseEvent, EpisodeStep, RecordingGap, TrainResult
from hookbus.kernel import (
    HookbusWarning,
    LifecycleError,
    check_lifecycle,
    read_recording,
    replay_into,
)
from hookbus.runners.bridges import rllib_callbacks
from tests.runners.bridges.bridge_callbacks import StepCounts
from tests.runners.bridges.rllib_helpers import ppo_config
from tests.runners.bridges.rllib_test_callbacks import KillsRunner

pytestmark = pytest.mark.usefixtures("ray_cluster")

LOST = r"lost env_runner:2's events from seq \d+ on \(iteration 2: "


class KilledRun:
    """Three iterations on 2 remote runners; runner 2 dies at iteration 2's result."""

    def __init__(self, path: Path) -> None:
        self.path = path
        bridge = rllib_callbacks(StepCounts, record=path)
        algo = ppo_config(2, bridge).callbacks([KillsRunner, bridge]).build_algo()
        try:
            self.results = [algo.train()]
            with warnings.catch_warnings(record=True) as self.warned:
                warnings.simplefilter("always")
                self.results += [algo.train(), algo.train()]  # after the kill: it goes on
        finally:
            algo.stop()
        self.events: list[BaseEvent] = list(read_recording(path))


@pytest.fixture(scope="module")
def killed(tmp_path_factory: pytest.TempPathFactory) -> KilledRun:
    return KilledRun(tmp_path_factory.mktemp("gap") / "run.msgpack")


def test_the_driver_warns_once_that_the_runners_events_were_lost(killed: KilledRun) -> None:
    ours = [w for w in killed.warned if issubclass(w.category, HookbusWarning)]
    assert len(ours) == 1, [str(w.message) for w in ours]
    assert ours[0].category is HookbusWarning
    message = str(ours[0].message)
    assert message.startswith(f"the recording {str(killed.path)!r} lost env_runner:2's events")
    assert "a RecordingGap event marks the place" in message


def test_the_recording_marks_the_gap_where_the_events_are_missing(killed: KilledRun) -> None:
    events = killed.events
    (gap,) = [e for e in events if isinstance(e, RecordingGap)]
    assert (gap.source, gap.lost_source, gap.training_iteration) == ("recorder", "env_runner:2", 2)
    before = events[: events.index(gap)]
    seqs = [e.seq for e in before if e.source == "env_runner:2"]
    assert gap.first_lost_seq == seqs[-1] + 1  # right after the last event it recorded
    second = next(e for e in events if isinstance(e, TrainResult) and e.training_iteration == 2)
    assert events.index(gap) < events.index(second)  # noticed at iteration 2's take
    # Runner 2 sampled iteration 2 (RLlib counted its steps) but none of that is recorded.
    upto = events[: events.index(second)]
    steps = Counter(e.source for e in upto if isinstance(e, EpisodeStep))
    sampled = killed.results[1]["num_env_steps_sampled_lifetime"]
    assert steps["env_runner:1"] + steps["env_runner:2"] < sampled
    assert [e.training_iteration for e in events if isinstance(e, TrainResult)] == [1, 2, 3]


def test_check_lifecycle_reports_the_gap(killed: KilledRun) -> None:
    with pytest.raises(LifecycleError, match=LOST + r".*leave RecordingGap events out") as info:
        check_lifecycle(killed.events)
    assert isinstance(info.value.event, RecordingGap)
    # The rest of the stream keeps the contract.
    check_lifecycle(e for e in killed.events if not isinstance(e, RecordingGap))


def test_a_replay_warns_that_it_goes_past_the_gap(killed: KilledRun) -> None:
    seen: list[Any] = []

    def note(*, event: Any, **kwargs: Any) -> None:
        seen.append(event)

    with pytest.warns(HookbusWarning, match=LOST + r".*what this replay gives misses those"):
        replay_into(killed.path, [StepCounts()], on_recording_gap=note)
    assert [(e.lost_source, e.training_iteration) for e in seen] == [("env_runner:2", 2)]


def test_inspect_shows_the_gap(killed: KilledRun) -> None:
    hookbus = Path(sys.executable).with_name("hookbus")
    shown = subprocess.run([hookbus, "inspect", killed.path], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    # Counted as every hook is, under the source of its own, and said in a line of its own.
    assert re.search(r"on_recording_gap +1\n", shown.stdout), shown.stdout
    assert re.search(r"recorder +1\n", shown.stdout), shown.stdout
    assert re.search(r"\ngap: the recording " + LOST, shown.stdout), shown.stdout
    checked = [hookbus, "inspect", "--check", killed.path]
    refused = subprocess.run(checked, capture_output=True, text=True)
    assert refused.returncode == 2
    assert "lost env_runner:2's events" in refused.stderr


def test_without_fault_tolerance_the_failed_take_loses_every_runners_events(
    tmp_path: Path,
) -> None:
    # RLlib tolerating no runner failure raises the dead runner's RayActorError out of the
    # driver's call; the live runner's events went out in that same call: both are gaps.
    # RLlib's own next sample would fail; this iteration's train() still returns.
    path = tmp_path / "run.msgpack"
    bridge = rllib_callbacks(StepCounts, record=path)
    config = ppo_config(2, bridge).callbacks([KillsRunner, bridge])
    algo = config.fault_tolerance(restart_failed_env_runners=False).build_algo()
    try:
        algo.train()
        with pytest.warns(HookbusWarning, match=r"call to take them failed \(\w+Error\)"):
            second = algo.train()
    finally:
        algo.stop()
    assert second["training_iteration"] == 2
    gaps = [e for e in read_recording(path) if isinstance(e, RecordingGap)]
    assert [(g.lost_source, g.training_iteration) for g in gaps] == [
        ("env_runner:1", 2),
        ("env_runner:2", 2),
    ]


def _pid(env_runner: Any) -> int:
    return os.getpid()


def _restarted(algo: Any, old: int) -> None:
    """Wait until Ray runs remote runner 1 in a new process (its actor restarted)."""
    from ray.exceptions import RayError

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            pids = algo.env_runner_group.foreach_env_runner(
                _pid, local_env_runner=False, healthy_only=False
            )
        except RayError:
            pids = []
        if pids and pids[0] != old:
            return
        time.sleep(0.5)
    raise AssertionError("Ray did not restart the runner's actor within 120 s")


def test_a_runner_restarted_between_two_takes_leaves_a_gap(tmp_path: Path) -> None:
    # Killed after the driver took its events and back before the next take: its new
    # process numbers from 0 again, and what the old one published in between (nothing,
    # here: it was idle) cannot be known, so the recording says it may be missing.
    path = tmp_path / "run.msgpack"
    algo = ppo_config(1, rllib_callbacks(StepCounts, record=path)).build_algo()
    try:
        algo.train()
        (pid,) = algo.env_runner_group.foreach_env_runner(_pid, local_env_runner=False)
        os.kill(pid, signal.SIGKILL)
        _restarted(algo, pid)
        with pytest.warns(HookbusWarning, match=r"lost env_runner:1's events from seq \d+ on"):
            algo.train()
    finally:
        algo.stop()
    events = list(read_recording(path))
    (gap,) = [e for e in events if isinstance(e, RecordingGap)]
    assert gap.reason.startswith("it numbers its events from 0 again (its actor was restarted)")
    after = [e for e in events[events.index(gap) + 1 :] if e.source == "env_runner:1"]
    assert after[0].seq == 0
    assert check_lifecycle(e for e in events if not isinstance(e, RecordingGap)).restarts == 1
