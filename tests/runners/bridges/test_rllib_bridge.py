"""The RLlib bridge against real RLlib 2.60 (torch on the CPU): the local runner, remote
EnvRunner actors, evaluation, checkpoints; recording there and replaying with hookbus."""

from __future__ import annotations

import logging
import math
import os
import subprocess
import sys
import textwrap
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

from hookbus.events import (
    AlgorithmInit,
    CheckpointLoaded,
    EpisodeCreated,
    EpisodeEnd,
    EpisodeStart,
    EpisodeStep,
    EvaluateEnd,
    EvaluateStart,
    RecordingGap,
    SampleEnd,
    TrainResult,
)
from hookbus.kernel import (
    ConfigError,
    HookbusWarning,
    check_lifecycle,
    read_recording,
    replay_into,
)
from hookbus.runners.bridges import rllib_callbacks
from tests.runners.bridges.bridge_callbacks import (
    AgentSteps,
    AsyncEnds,
    Order,
    Raises,
    StepCounts,
)
from tests.runners.bridges.rllib_helpers import FullReturn, multi_agent_config, ppo_config

pytestmark = pytest.mark.usefixtures("ray_cluster")

ITERATIONS = 2


class RemoteRun:
    """One bridged run: 2 remote runners, evaluation each iteration, a checkpoint restored."""

    def __init__(self, path: Path) -> None:
        self.path = path
        bridge = rllib_callbacks(StepCounts, FullReturn, record=path)
        config = ppo_config(2, bridge).evaluation(
            evaluation_interval=1,
            evaluation_duration=2,
            evaluation_duration_unit="episodes",
            evaluation_num_env_runners=0,
        )
        algo = config.build_algo()
        try:
            self.results = [algo.train() for _ in range(ITERATIONS)]
            # RLlib 2.60 calls on_checkpoint_loaded from load_checkpoint (Tune's restore
            # path), not from restore_from_path.
            algo.load_checkpoint(algo.save_to_path(str(path.parent / "checkpoint")))
        finally:
            algo.stop()
        self.events = list(read_recording(path))


@pytest.fixture(scope="module")
def remote_run(tmp_path_factory: pytest.TempPathFactory) -> RemoteRun:
    return RemoteRun(tmp_path_factory.mktemp("rllib") / "run.msgpack")


def test_every_runner_is_a_source_in_one_file(remote_run: RemoteRun) -> None:
    sources = Counter(e.source for e in remote_run.events)
    assert {"algorithm", "env_runner:1", "env_runner:2", "eval_env_runner:0"} <= set(sources)
    for source in sources:  # in order per source, gap-free
        seqs = [e.seq for e in remote_run.events if e.source == source]
        assert seqs == list(range(len(seqs))), source


def test_the_algorithm_hooks_in_order(remote_run: RemoteRun) -> None:
    algorithm = [type(e) for e in remote_run.events if e.source == "algorithm"]
    per_iteration = [EvaluateStart, EvaluateEnd, TrainResult]
    assert algorithm == [AlgorithmInit, *per_iteration * ITERATIONS, CheckpointLoaded]
    results = [e for e in remote_run.events if isinstance(e, TrainResult)]
    assert [e.training_iteration for e in results] == [1, 2]
    # What RLlib reported, as data (its config, which holds classes, left out).
    assert "config" not in results[0].result
    assert (
        results[-1].result["env_runners"]["hb_steps"]
        == (remote_run.results[-1]["env_runners"]["hb_steps"])
    )


def test_every_episode_runs_its_hooks_in_order(remote_run: RemoteRun) -> None:
    hooks: dict[tuple[str, str], list[type]] = defaultdict(list)
    for event in remote_run.events:
        if isinstance(event, EpisodeCreated | EpisodeStart | EpisodeStep | EpisodeEnd):
            hooks[event.source, event.episode_id].append(type(event))
    ended = 0
    for sequence in hooks.values():
        if sequence == [EpisodeCreated]:  # made at a sample's end, for the next sample
            continue
        assert sequence[:2] == [EpisodeCreated, EpisodeStart]
        steps = sequence[2:]
        if steps and steps[-1] is EpisodeEnd:
            ended += 1
            steps = steps[:-1]
        assert steps == [EpisodeStep] * len(steps)  # the final step's hook before the end
    assert ended > 10
    check_lifecycle(remote_run.events)  # hookbus's own rules hold for RLlib's stream


def test_step_counts_equal_rllibs_env_steps(remote_run: RemoteRun) -> None:
    steps = Counter(e.source for e in remote_run.events if isinstance(e, EpisodeStep))
    sampled = sum(n for source, n in steps.items() if source.startswith("env_runner"))
    last = remote_run.results[-1]
    assert sampled == last["num_env_steps_sampled_lifetime"]
    sample_ends = [e for e in remote_run.events if isinstance(e, SampleEnd)]
    training_ends = [e for e in sample_ends if e.source.startswith("env_runner")]
    assert sum(e.num_env_steps for e in training_ends) == sampled
    # The handler's own count, merged by RLlib across the two actors, is the same number.
    assert sum(r["env_runners"]["hb_steps"] for r in remote_run.results) == sampled


def test_replayed_sums_equal_what_rllib_reported(remote_run: RemoteRun) -> None:
    training = {"env_runner:1", "env_runner:2"}
    replayed = replay_into(remote_run.path, [StepCounts()], sources=training)
    reported = remote_run.results
    for key in ("hb_steps", "hb_episodes"):  # per iteration, as RLlib reports them
        ours = [it["env_runners"][key] for it in replayed.iterations]
        assert ours == [r["env_runners"][key] for r in reported], key


def test_rllib_callbacks_get_rllibs_own_arguments(remote_run: RemoteRun) -> None:
    # FullReturn reads prev_episode_chunks, which only RLlib passes: its whole-episode
    # returns are RLlib's own episode returns.
    for result in remote_run.results:
        runners = result["env_runners"]
        assert math.isclose(runners["full_return"], runners["episode_return_mean"])


# --- the local runner: one process, deterministic --------------------------------------------


def _train(callbacks: type, iterations: int = ITERATIONS) -> list[dict[str, Any]]:
    algo = ppo_config(0, callbacks).build_algo()
    try:
        return [algo.train() for _ in range(iterations)]
    finally:
        algo.stop()


@pytest.fixture(scope="module")
def plain_results() -> list[dict[str, Any]]:
    return _train(FullReturn)


def test_metrics_land_as_a_plain_rllib_callbacks_would(
    plain_results: list[dict[str, Any]], tmp_path: Path
) -> None:
    bridged = _train(rllib_callbacks(FullReturn, record=tmp_path / "run.msgpack"))
    for plain, through in zip(plain_results, bridged, strict=True):
        assert through["env_runners"]["full_return"] == plain["env_runners"]["full_return"]
        assert (
            through["env_runners"]["num_env_steps_sampled"]
            == (plain["env_runners"]["num_env_steps_sampled"])
        )


def test_a_replayed_windowed_mean_equals_rllibs(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    (result,) = _train(rllib_callbacks(StepCounts, record=path), iterations=1)
    assert path.read_bytes().startswith(b"{")  # a .jsonl path is written as JSON lines
    replayed = replay_into(path, [StepCounts()])
    reported, ours = result["env_runners"], replayed.metrics["env_runners"]
    assert math.isclose(ours["hb_last_chunk_len"], reported["hb_last_chunk_len"])
    assert ours["hb_steps"] == reported["hb_steps"] == reported["num_env_steps_sampled"]


def test_multi_agent_episodes_are_published_per_agent(tmp_path: Path) -> None:
    path = tmp_path / "run.msgpack"
    algo = multi_agent_config(rllib_callbacks(AgentSteps, StepCounts, record=path)).build_algo()
    try:
        result = algo.train()
    finally:
        algo.stop()
    runners = result["env_runners"]
    agent_steps = sum(runners["num_agent_steps_sampled"].values())
    assert runners["hb_agent_steps"] == agent_steps
    assert runners["hb_steps"] == runners["num_env_steps_sampled"]
    events = list(read_recording(path))
    check_lifecycle(events)
    steps = [e for e in events if isinstance(e, EpisodeStep)]
    assert {a.module_id for e in steps for a in e.agents or ()} == {"p0", "p1"}
    replayed = replay_into(path, [AgentSteps(), StepCounts()])
    assert replayed.metrics["env_runners"]["hb_agent_steps"] == agent_steps
    assert replayed.metrics["env_runners"]["hb_episodes"] == runners["hb_episodes"]


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_async_handlers_are_awaited(backend: str) -> None:
    (result,) = _train(rllib_callbacks(AsyncEnds, StepCounts, async_backend=backend), 1)
    runners = result["env_runners"]
    assert runners["hb_async_ends"] == runners["hb_episodes"] > 0


def test_a_raising_handler_under_log_does_not_end_the_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR):
        (result,) = _train(rllib_callbacks(Raises, StepCounts, on_error="log"), 1)
    assert result["env_runners"]["hb_episodes"] > 0  # the rest of the chain ran
    assert "boom from a handler" in caplog.text


def test_a_raising_handler_by_default_ends_train() -> None:
    algo = ppo_config(0, rllib_callbacks(Raises)).build_algo()
    try:
        with pytest.raises(RuntimeError, match="boom from a handler") as raised:
            algo.train()
        assert any("on_episode_end" in note for note in raised.value.__notes__)
    finally:
        algo.stop()


def test_chain_order_classes_then_callables() -> None:
    Order.seen.clear()

    def last(**kwargs: Any) -> None:
        Order.seen.append("callable")

    bridge = rllib_callbacks(Order("first"), Order("second"), on_sample_end=last)
    _train(bridge, 1)
    assert Order.seen[:3] == ["first", "second", "callable"]


# --- bad input, imports -----------------------------------------------------------------------


def test_bad_arguments_are_refused_before_training(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"async_backend='curio'.*'asyncio', 'trio'"):
        rllib_callbacks(StepCounts, async_backend="curio")
    with pytest.raises(ConfigError, match="its folder does not exist"):
        rllib_callbacks(StepCounts, record=tmp_path / "missing" / "run.msgpack")
    with pytest.raises(ConfigError, match="on_error"):
        rllib_callbacks(StepCounts, on_error="ignore")
    with pytest.raises(ConfigError, match="callback class or instance"):
        rllib_callbacks(42)
    with pytest.raises(ConfigError, match="on_episode_ned"):
        rllib_callbacks(on_episode_ned=print)


def test_importing_the_bridges_imports_no_framework() -> None:
    code = "import sys, hookbus.runners.bridges; print(sorted({'ray', 'torch'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.fixture
def no_ray(tmp_path: Path) -> dict[str, str]:
    """An environment where ``import ray`` (and torch) fails, as on a machine without them."""
    for name in ("ray", "torch"):
        package = tmp_path / "hidden" / name
        package.mkdir(parents=True)
        (package / "__init__.py").write_text(f"raise ImportError('{name} is not installed here')\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "hidden"), os.getcwd()])
    return env


def test_the_recording_replays_with_hookbus_alone(
    remote_run: RemoteRun, no_ray: dict[str, str]
) -> None:
    code = textwrap.dedent(
        f"""
        from hookbus.kernel import replay_into
        from tests.runners.bridges.bridge_callbacks import StepCounts
        replayed = replay_into({str(remote_run.path)!r}, [StepCounts()])
        print(replayed.metrics["env_runners"]["hb_episodes"])
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=no_ray, check=True
    )
    everywhere = replay_into(remote_run.path, [StepCounts()])
    assert int(float(out.stdout)) == everywhere.metrics["env_runners"]["hb_episodes"]
    inspect = subprocess.run(
        [Path(sys.executable).with_name("hookbus"), "inspect", str(remote_run.path)],
        capture_output=True,
        text=True,
        env=no_ray,
    )
    assert inspect.returncode == 0, inspect.stderr
    assert "episode_step" in inspect.stdout


class _Algorithm:
    """What RLlib's Algorithm offers the driver's hooks that these calls read."""

    iteration = 3
    env_runner_group = eval_env_runner_group = None


def test_rarely_called_driver_hooks_are_published_as_rllib_calls_them(tmp_path: Path) -> None:
    # RLlib 2.60 calls these only with offline data or after an actor died: called here
    # with the keywords its Algorithm passes (algorithm.py, _try_restart... and evaluate_offline).
    seen: list[tuple[str, Any]] = []

    def note(*, event: Any, env_runner_indices: Any = None, **kwargs: Any) -> None:
        seen.append((type(event).__name__, env_runner_indices))

    hooks = (
        "on_evaluate_offline_start",
        "on_evaluate_offline_end",
        "on_offline_eval_runners_recreated",
        "on_env_runners_recreated",
    )
    path = tmp_path / "run.msgpack"
    callbacks = rllib_callbacks(record=path, **dict.fromkeys(hooks, note))()
    algorithm, group = _Algorithm(), object()
    callbacks.on_evaluate_offline_start(algorithm=algorithm, metrics_logger=None)
    metrics = {"offline_eval_runners": {"loss": 0.5}, "config": object()}
    callbacks.on_evaluate_offline_end(
        algorithm=algorithm, metrics_logger=None, evaluation_metrics=metrics
    )
    callbacks.on_offline_eval_runners_recreated(
        algorithm=algorithm, env_runner_group=group, env_runner_indices=[2]
    )
    callbacks.on_env_runners_recreated(
        algorithm=algorithm, env_runner_group=group, env_runner_indices=[1], is_evaluation=True
    )
    assert seen == [
        ("EvaluateOfflineStart", None),
        ("EvaluateOfflineEnd", None),
        ("OfflineEvalRunnersRecreated", [2]),
        ("EnvRunnersRecreated", [1]),
    ]
    recorded = list(read_recording(path))  # written at once: RLlib may stop after any
    assert [type(e).__name__ for e in recorded] == [name for name, _ in seen]
    assert recorded[1].evaluation_metrics == {"offline_eval_runners": {"loss": 0.5}}
    assert recorded[0].training_iteration == 3
    assert recorded[3].is_evaluation is True


def _exit_now(env_runner: Any) -> None:
    os._exit(1)  # the actor's process dies mid-call, as a crash would end it


def _kill_and_train_until(algo: Any, seen: list[Any]) -> None:
    """End the remote runner's process, then train until RLlib says it was recreated."""
    import time

    algo.env_runner_group.foreach_env_runner(_exit_now, local_env_runner=False)
    deadline = time.monotonic() + 120  # Ray starts the actor's process again first
    while not seen and time.monotonic() < deadline:
        time.sleep(1)
        algo.train()


def test_a_killed_runner_that_ray_restarts_is_announced(tmp_path: Path) -> None:
    # A real restart: the remote runner's process exits, RLlib takes it out of service,
    # Ray restarts the actor, and RLlib's next training step finds it healthy again and
    # calls on_env_runners_recreated (Algorithm.restore_env_runners), on the driver.
    seen: list[tuple[list[int], bool, bool]] = []

    def note(*, env_runner_group: Any, env_runner_indices: Any, is_evaluation: Any, **kw: Any):
        seen.append((list(env_runner_indices), is_evaluation, env_runner_group is not None))

    path = tmp_path / "run.msgpack"
    bridge = rllib_callbacks(record=path, on_env_runners_recreated=note)
    config = ppo_config(1, bridge).fault_tolerance(restart_failed_env_runners=True)
    algo = config.build_algo()
    try:
        algo.train()
        # What the dead process kept since the driver's last take is lost, if it kept
        # anything: the recording cannot tell, so it marks a gap (test_rllib_gaps.py).
        with pytest.warns(HookbusWarning, match=r"lost env_runner:1's events from seq \d+ on"):
            _kill_and_train_until(algo, seen)
        sampled = algo.train()["env_runners"]["num_env_steps_sampled"]
    finally:
        algo.stop()
    assert seen == [([1], False, True)]
    assert sampled == 200  # the restarted runner samples again
    events = list(read_recording(path))
    recreated = [e for e in events if type(e).__name__ == "EnvRunnersRecreated"]
    assert [(e.source, e.env_runner_indices, e.is_evaluation) for e in recreated] == [
        ("algorithm", [1], False)
    ]
    assert [e.lost_source for e in events if isinstance(e, RecordingGap)] == ["env_runner:1"]
    # Past the gap, its new process's events check as a restart.
    summary = check_lifecycle(e for e in events if not isinstance(e, RecordingGap))
    assert summary.restarts == 1
