"""The "process" backend: runners in worker processes, events forwarded to observers."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import traceback
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from hookbus.events import EpisodeEnd, EpisodeStep
from hookbus.kernel import ConfigError, Recorder, read_recording
from hookbus.runners import PPOConfig, RemoteError, RemoteTraceback

sys.path.insert(0, str(Path(__file__).parents[1]))  # so worker processes import the helpers too
import process_helpers


@pytest.fixture
def process_ppo(small_ppo: PPOConfig) -> PPOConfig:
    return small_ppo.env_runners(num_env_runners=2, backend="process")


def test_training_aggregates_the_workers_metrics(process_ppo: PPOConfig) -> None:
    with process_ppo.callbacks(process_helpers.WorkerSide).build() as algo:
        first = algo.train()
        result = algo.train()
    runners = result["env_runners"]
    assert 200 <= runners["num_env_steps_sampled"] < 210  # 2 x ceil(200 / 2), per iteration
    assert (
        result["num_env_steps_sampled_lifetime"]
        == first["num_env_steps_sampled_lifetime"] + (runners["num_env_steps_sampled"])
    )
    assert runners["episodes_seen"] == runners["num_episodes_lifetime"]
    assert runners["worker_pid"] != os.getpid()  # the class ran in a worker


def test_observers_see_every_runners_events_in_order(process_ppo: PPOConfig) -> None:
    with process_ppo.callbacks(process_helpers.Watcher).build() as algo:
        algo.train()
        watcher = algo.bus.callbacks[0]
        assert isinstance(watcher, process_helpers.Watcher)
        seen = list(watcher.events)
    assert watcher.pids == {os.getpid()}
    by_source: dict[str, list[int]] = defaultdict(list)
    for event in seen:
        by_source[event.source].append(event.seq)
    assert set(by_source) == {"env_runner:1", "env_runner:2"}
    for seqs in by_source.values():
        assert seqs == sorted(seqs)
    assert any(isinstance(e, EpisodeEnd) for e in seen)


@pytest.mark.anyio
async def test_every_env_step_fires_on_episode_step_in_the_worker_too(small_ppo: PPOConfig) -> None:
    config = small_ppo.env_runners(num_env_runners=1, backend="process").callbacks(
        process_helpers.EpisodeAndSampleCounts  # its checks run in the worker process
    )
    steps: list[EpisodeStep] = []
    ends: list[EpisodeEnd] = []
    async with config.build() as algo:
        algo.bus.subscribe(EpisodeStep, lambda event, **kw: steps.append(event))
        algo.bus.subscribe(EpisodeEnd, lambda event, **kw: ends.append(event))
        results = [await algo.atrain() for _ in range(2)]
    for result in results:
        runners = result["env_runners"]
        assert runners["hook_sample"] == 1
        assert runners["hook_step"] == runners["num_env_steps_sampled"] >= 200
        assert runners["hook_end"] == runners["num_episodes"] > 0
    # The observers on the Algorithm's bus got every step, each episode's last one flagged.
    assert len(steps) == sum(r["env_runners"]["num_env_steps_sampled"] for r in results)
    last = {step.episode_id: step for step in steps}
    assert ends
    for end in ends:
        assert last[end.episode_id].seq == end.seq - 1
        assert (last[end.episode_id].terminated, last[end.episode_id].truncated) == (
            end.terminated,
            end.truncated,
        )


def test_subscribe_handlers_are_observers_too(process_ppo: PPOConfig) -> None:
    ends: list[Any] = []
    with process_ppo.build() as algo:
        algo.bus.subscribe(EpisodeEnd, lambda event, **kw: ends.append(event))
        result = algo.train()
    assert len(ends) == result["env_runners"]["num_episodes"]


def test_worker_errors_reach_train_with_the_worker_named(process_ppo: PPOConfig) -> None:
    with process_ppo.callbacks(process_helpers.Explodes).build() as algo:
        with pytest.raises(ArithmeticError, match="raised in a worker") as info:
            algo.train()
    notes = info.value.__notes__
    assert "hook 'on_episode_end'" in notes[0]
    # Both workers may fail; then a note names the other failure too.
    worker_note = re.compile(r"hookbus: raised in env runner [12] \(worker process \d+\)")
    assert any(worker_note.match(note) for note in notes)


def test_a_workers_exception_has_its_remote_traceback_as_cause(process_ppo: PPOConfig) -> None:
    with process_ppo.callbacks(process_helpers.ExplodesOnStep).build() as algo:
        with pytest.raises(LookupError, match="the user's own error") as info:
            algo.train()
    here = f"{process_helpers.__file__}:{process_helpers.raise_line()} in on_episode_step"
    assert any(note.endswith(f", at {here}") for note in info.value.__notes__)
    cause = info.value.__cause__
    assert isinstance(cause, RemoteTraceback)
    printed = "".join(traceback.format_exception(info.value))
    # As Ray shows a remote task's error: the worker's traceback, down to the user's line.
    assert f'File "{process_helpers.__file__}", line {process_helpers.raise_line()}' in printed
    assert "The above exception was the direct cause" in printed


@pytest.mark.anyio
async def test_foreach_env_and_runner_run_in_the_workers(process_ppo: PPOConfig) -> None:
    async with process_ppo.build() as algo:
        group = algo.env_runner_group
        assert group is not None
        names = await group.aforeach_env(process_helpers.sub_env_name)
        indices = await group.aforeach_env_runner(process_helpers.runner_index)
    assert names == [["CartPoleEnv"]] * 3
    assert indices == [0, 1, 2]


def test_unpicklable_callbacks_are_explained(process_ppo: PPOConfig) -> None:
    lock = threading.Lock()  # no pickler sends a lock to another process
    config = process_ppo.callbacks(on_episode_end=lambda **kw: lock)
    with pytest.raises(ConfigError, match="sends the config to worker processes with cloudpickle"):
        config.build()


def test_lambdas_and_closures_travel_to_worker_processes(process_ppo: PPOConfig) -> None:
    """RLlib's documented curriculum lambda: cloudpickle carries it, as Ray does."""
    level = 3
    config = process_ppo.environment(
        process_helpers.Levels, env_task_fn=lambda result, env, ctx: level
    ).callbacks(on_episode_end=lambda **kw: None)
    with config.build() as algo:
        algo.train()
        tasks = algo.env_runner_group.foreach_env(lambda env: env.get_task())
    assert tasks == [[3]] * 3


@pytest.mark.anyio
async def test_process_backend_inside_an_event_loop(process_ppo: PPOConfig) -> None:
    async with process_ppo.build() as algo:
        result = await algo.atrain()
    assert result["env_runners"]["num_env_steps_sampled"] >= 200


def test_a_dead_worker_is_reported_with_its_exit_code(process_ppo: PPOConfig) -> None:
    config = process_ppo.callbacks(process_helpers.Dies).fault_tolerance(
        restart_failed_env_runners=False
    )
    with config.build() as algo:
        with pytest.raises(
            RemoteError,
            match=r"env runner [12] \(worker process \d+\) died "
            r"\(exit code 3\)",
        ) as info:
            algo.train()
    assert any("restart_failed_env_runners=True" in note for note in info.value.__notes__)


def test_a_recorder_records_every_workers_events(process_ppo: PPOConfig, tmp_path: Path) -> None:
    path = tmp_path / "run.msgpack"
    with process_ppo.callbacks([Recorder(path), process_helpers.WorkerSide]).build() as algo:
        result = algo.train()
    events = list(read_recording(path))
    by_source: dict[str, list[int]] = defaultdict(list)
    for event in events:
        by_source[event.source].append(event.seq)
    # The local runner (index 0) makes its env but does not sample while remote ones do.
    assert set(by_source) == {"env_runner:0", "env_runner:1", "env_runner:2", "algorithm"}
    assert {type(e).__name__ for e in events if e.source == "env_runner:0"} == {
        "EnvironmentCreated"
    }
    for seqs in by_source.values():
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # in order, no gaps
    ends = [e for e in events if isinstance(e, EpisodeEnd)]
    assert len(ends) == result["env_runners"]["num_episodes"]


def test_logged_worker_errors_are_counted_in_results(process_ppo: PPOConfig) -> None:
    config = process_ppo.callbacks(process_helpers.ExplodesOnEvenSteps, on_error="log")
    with config.build() as algo:
        first = algo.train()
        second = algo.train()
    assert first["callbacks"]["errors"] > 0
    assert second["callbacks"]["errors"] > first["callbacks"]["errors"]
    # Each worker raises on half its episode ends (rounded down).
    assert second["callbacks"]["errors"] <= second["env_runners"]["num_episodes_lifetime"] // 2


SCRIPT_HEAD = """
import argparse
from hookbus.kernel import Callback
from hookbus.runners import PPOConfig

def config(callback):
    return (
        PPOConfig().environment("CartPole-v1").callbacks(callback)
        .env_runners(num_env_runners=1, backend="process")
        .training(train_batch_size=100, minibatch_size=50, num_epochs=1)
    )
"""

CB = """
class CB(Callback):
    def on_episode_end(self, **kwargs):
        pass
"""

TRAIN = """
with config(CB).build() as algo:
    print("trained", algo.train()["training_iteration"])
"""

GUARDED = "\nif __name__ == '__main__':\n" + "\n".join("    " + line for line in TRAIN.splitlines())


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (CB + TRAIN, "builds an Algorithm when imported"),
        (
            CB + "argparse.ArgumentParser().parse_args()\n" + GUARDED,
            "fails when imported (SystemExit",
        ),
    ],
    ids=["trains-when-imported", "reads-argv"],
)
def test_a_script_without_the_main_guard_is_told_the_fix(
    tmp_path: Path, body: str, says: str
) -> None:
    script = tmp_path / "train_script.py"
    script.write_text(SCRIPT_HEAD + body)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode != 0
    last = [line for line in done.stderr.splitlines() if "MainGuardError" in line][-1]
    assert says in last
    assert '`if __name__ == "__main__":`' in last


@pytest.mark.parametrize(
    "body",
    [
        CB + GUARDED,
        # A class defined under the guard travels by value (cloudpickle, as with Ray).
        "\nif __name__ == '__main__':\n"
        + "\n".join("    " + ln for ln in (CB + TRAIN).splitlines()),
    ],
    ids=["class-at-module-level", "class-under-the-guard"],
)
def test_a_guarded_script_trains(tmp_path: Path, body: str) -> None:
    script = tmp_path / "train_script.py"
    script.write_text(SCRIPT_HEAD + body)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "trained 1" in done.stdout
