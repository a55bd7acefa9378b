"""The "ray" backend: EnvRunners as Ray actors, events and metrics as with worker processes."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from hookbus.events import EpisodeEnd
from hookbus.kernel import ConfigError, Recorder, read_recording
from hookbus.runners import PPOConfig, RemoteError, RemoteTraceback

sys.path.insert(0, str(Path(__file__).parents[1]))  # so actors import the helpers too
import process_helpers

pytestmark = pytest.mark.usefixtures("ray_cluster")


@pytest.fixture
def ray_ppo(small_ppo: PPOConfig) -> PPOConfig:
    # Half a CPU each: the session's Ray has 2, and a restarted actor may start before Ray
    # has released the one it replaces.
    return small_ppo.env_runners(num_env_runners=2, backend="ray", num_cpus_per_env_runner=0.5)


def faulty(ray_ppo: PPOConfig, tmp_path: Path, how: str, at_step: int = 30) -> PPOConfig:
    env_config = {"fail_on": [1], "how": how, "at_step": at_step, "marker_dir": str(tmp_path)}
    return ray_ppo.environment(process_helpers.Faulty, env_config=env_config).fault_tolerance(
        delay_between_env_runner_restarts_s=0
    )


def test_training_aggregates_the_actors_metrics(ray_ppo: PPOConfig) -> None:
    with ray_ppo.callbacks(process_helpers.WorkerSide).build() as algo:
        first = algo.train()
        result = algo.train()
        pids = algo.env_runner_group.foreach_env_runner(
            process_helpers.worker_pid, local_env_runner=False
        )
    runners = result["env_runners"]
    assert 200 <= runners["num_env_steps_sampled"] < 210
    assert (
        result["num_env_steps_sampled_lifetime"]
        == first["num_env_steps_sampled_lifetime"] + runners["num_env_steps_sampled"]
    )
    assert runners["episodes_seen"] == runners["num_episodes_lifetime"]
    assert runners["worker_pid"] in pids
    assert os.getpid() not in pids


def test_the_same_seed_gives_the_same_numbers_as_worker_processes(ray_ppo: PPOConfig) -> None:
    def run(backend: str) -> dict[str, Any]:
        with ray_ppo.env_runners(backend=backend).build() as algo:
            algo.train()
            result: dict[str, Any] = algo.train()["env_runners"]
        return result

    on_ray, on_processes = run("ray"), run("process")
    for key in ("num_env_steps_sampled", "num_episodes", "episode_return_mean"):
        assert on_ray[key] == on_processes[key]


def test_observers_and_a_recorder_see_every_actors_events_in_order(
    ray_ppo: PPOConfig, tmp_path: Path
) -> None:
    path = tmp_path / "run.msgpack"
    with ray_ppo.callbacks([Recorder(path), process_helpers.Watcher]).build() as algo:
        result = algo.train()
        watcher = algo.bus.callbacks[1]
    assert isinstance(watcher, process_helpers.Watcher)
    assert watcher.pids == {os.getpid()}  # observers stay on the Algorithm's bus
    by_source: dict[str, list[int]] = defaultdict(list)
    for event in read_recording(path):
        by_source[event.source].append(event.seq)
    assert set(by_source) == {"env_runner:0", "env_runner:1", "env_runner:2", "algorithm"}
    for seqs in by_source.values():
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # in order, no gaps
    ends = [e for e in watcher.events if isinstance(e, EpisodeEnd)]
    assert len(ends) == result["env_runners"]["num_episodes"]


def test_handler_errors_in_actors_reach_train_with_the_actor_named(ray_ppo: PPOConfig) -> None:
    with ray_ppo.callbacks(process_helpers.Explodes).build() as algo:
        with pytest.raises(ArithmeticError, match="raised in a worker") as info:
            algo.train()
    note = re.compile(r"hookbus: raised in env runner [12] \(ray actor, pid \d+\)")
    assert any(note.match(n) for n in info.value.__notes__)


def test_an_actors_exception_has_its_remote_traceback_as_cause(ray_ppo: PPOConfig) -> None:
    with ray_ppo.callbacks(process_helpers.ExplodesOnStep).build() as algo:
        with pytest.raises(LookupError) as info:
            algo.train()
    assert isinstance(info.value.__cause__, RemoteTraceback)
    line = process_helpers.raise_line()
    assert f'File "{process_helpers.__file__}", line {line}' in str(info.value.__cause__)
    here = f"at {process_helpers.__file__}:{line} in on_episode_step"
    assert any(n.endswith(here) for n in info.value.__notes__)


@pytest.mark.anyio
async def test_ray_runners_inside_an_event_loop(ray_ppo: PPOConfig) -> None:
    async with ray_ppo.build() as algo:
        result = await algo.atrain()
        group = algo.env_runner_group
        names = await group.aforeach_env(process_helpers.sub_env_name)
        # cloudpickle carries lambdas to actors (worker processes need module-level functions)
        indices = await group.aforeach_env_runner(lambda runner: runner.worker_index)
    assert result["env_runners"]["num_env_steps_sampled"] >= 200
    assert names == [["CartPoleEnv"]] * 3
    assert indices == [0, 1, 2]


@pytest.mark.parametrize(
    ("how", "at_step"),
    [("ray_kill", 30), ("raise", random.Random(15).randint(5, 90))],
    ids=["ray.kill", "env-raises-at-a-random-step"],
)
def test_a_failed_actor_is_replaced_and_the_others_samples_kept(
    ray_ppo: PPOConfig, tmp_path: Path, how: str, at_step: int
) -> None:
    config = faulty(ray_ppo, tmp_path, how, at_step).callbacks(
        [process_helpers.WorkerSide, process_helpers.Recreations(), process_helpers.Watcher()]
    )
    with config.build() as algo:
        first = algo.train()  # runner 1's actor fails during its sampling
        assert algo.env_runner_group.healthy_env_runner_ids() == [2]
        second = algo.train()  # a new actor, with the current weights
        assert algo.env_runner_group.healthy_env_runner_ids() == [1, 2]
        recreations, watcher = algo.bus.callbacks[1], algo.bus.callbacks[2]
    assert first["env_runner_group"]["num_healthy_env_runners"] == 1
    assert first["num_env_steps_sampled_lifetime"] >= 200
    ends = [e for e in watcher.events if isinstance(e, EpisodeEnd)]  # type: ignore[attr-defined]
    assert second["env_runner_group"] == {
        "num_healthy_env_runners": 2,
        "num_remote_env_runner_restarts": 1,
    }
    assert recreations.calls == [([1], False)]  # type: ignore[attr-defined]
    assert recreations.weights_match == [True]  # type: ignore[attr-defined]
    assert second["env_runners"]["episodes_seen"] > 0  # callbacks rebuilt in the new actor
    assert {e.source for e in ends} == {"env_runner:1", "env_runner:2"}


def test_a_hung_actor_times_out_and_is_replaced(ray_ppo: PPOConfig, tmp_path: Path) -> None:
    config = faulty(ray_ppo, tmp_path, "hang").env_runners(sample_timeout_s=2.0)
    with config.build() as algo:
        first = algo.train()
        second = algo.train()
    assert first["env_runner_group"]["num_healthy_env_runners"] == 1
    assert first["num_env_steps_sampled_lifetime"] >= 200
    assert second["env_runner_group"]["num_healthy_env_runners"] == 2


def test_without_restarts_a_killed_actor_is_named(ray_ppo: PPOConfig, tmp_path: Path) -> None:
    config = faulty(ray_ppo, tmp_path, "ray_kill").fault_tolerance(restart_failed_env_runners=False)
    with config.build() as algo:
        with pytest.raises(RemoteError, match=r"env runner 1 \(ray actor, pid \d+\) died") as info:
            algo.train()
    assert any("restart_failed_env_runners=True" in note for note in info.value.__notes__)


def test_more_actor_failures_in_a_row_than_the_tolerance_are_raised(ray_ppo: PPOConfig) -> None:
    env_config = {"fail_on": [1, 2], "how": "raise", "at_step": 30}  # every actor, every time
    config = ray_ppo.environment(process_helpers.Faulty, env_config=env_config).fault_tolerance(
        num_consecutive_env_runner_failures_tolerance=1
    )
    with config.build() as algo:
        with pytest.raises(ValueError, match=r"env failed at step 30") as info:
            algo.train()  # both actors fail in the first round: 2 in a row
    assert any(
        "num_consecutive_env_runner_failures_tolerance=1" in note for note in info.value.__notes__
    )


def test_no_actor_outlives_stop_or_a_failed_build(ray_ppo: PPOConfig, tmp_path: Path) -> None:
    with ray_ppo.build() as algo:
        pids = algo.env_runner_group.foreach_env_runner(
            process_helpers.worker_pid, local_env_runner=False
        )
    wait_until(lambda: not any(map(process_helpers.alive, pids)))
    config = faulty(ray_ppo, tmp_path, "init")
    with pytest.raises(ValueError, match="env of runner 1 failed to start"):
        config.build()
    import ray

    wait_until(lambda: ray.available_resources().get("CPU") == 2.0)  # every actor released


def test_actors_ray_cannot_place_are_one_error_naming_cpus_asked_and_had(
    ray_ppo: PPOConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 3 runners x 1 CPU on the session's 2-CPU Ray: the third actor never gets placed, and
    # Ray would wait for it forever.
    import ray

    monkeypatch.setenv("HOOKBUS_RAY_PLACEMENT_TIMEOUT_S", "3")
    config = ray_ppo.copy().env_runners(num_env_runners=3, num_cpus_per_env_runner=1)
    message = (
        r"Ray did not place and start env runner \d's actor within 3 s \(HOOKBUS_RAY_PLACEMENT_"
        r"TIMEOUT_S\): the config asks for 3 runners x 1 CPU \(num_cpus_per_env_runner\) = 3 "
        r"CPUs, and the Ray cluster has 2 CPUs, [\d.]+ of them free; lower num_env_runners or "
    )
    with pytest.raises(ConfigError, match=message):
        config.build()
    wait_until(lambda: ray.available_resources().get("CPU") == 2.0)  # every actor released
    # What fits still builds (with the default timeout: under load, starting an actor's
    # process alone may take seconds).
    monkeypatch.delenv("HOOKBUS_RAY_PLACEMENT_TIMEOUT_S")
    with ray_ppo.build() as algo:
        assert algo.env_runner_group.healthy_env_runner_ids() == [1, 2]


def test_a_bad_placement_timeout_is_named(
    ray_ppo: PPOConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOOKBUS_RAY_PLACEMENT_TIMEOUT_S", "soon")
    with pytest.raises(ConfigError, match=r"HOOKBUS_RAY_PLACEMENT_TIMEOUT_S must be a number of "
                       r"seconds > 0, got 'soon'"):  # fmt: skip
        ray_ppo.build()


def wait_until(condition: Any, seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


_DRIVER = """
import sys, time
sys.path.insert(0, {helpers!r})
import process_helpers
from hookbus.runners import PPOConfig
config = (
    PPOConfig()
    .environment("CartPole-v1")
    .env_runners(num_env_runners=2, backend="ray", num_cpus_per_env_runner=0.5)
    .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
)
algo = config.build()  # hookbus starts a local Ray: none is initialised in this process
print(*algo.env_runner_group.foreach_env_runner(process_helpers.worker_pid, local_env_runner=False))
sys.stdout.flush()
time.sleep(3600)
"""


def test_actors_end_when_the_driver_is_killed() -> None:
    code = _DRIVER.format(helpers=str(Path(__file__).parents[1]))
    driver = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert driver.stdout is not None
        pids = [int(pid) for pid in driver.stdout.readline().split()]
        assert len(pids) == 2
        driver.kill()
        driver.wait()
        wait_until(lambda: not any(map(process_helpers.alive, pids)))
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
        driver.stdout.close()  # type: ignore[union-attr]


def test_without_ray_installed_the_backend_is_one_error_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    config = PPOConfig().environment("CartPole-v1").env_runners(backend="ray")
    with pytest.raises(
        ConfigError, match=r"backend 'ray' needs 'ray'.*pip install 'hookbus\[ray\]'"
    ):
        config.build()


def test_hookbus_imports_and_trains_without_ray() -> None:
    code = (
        "import sys; sys.modules['ray'] = None\n"  # Ray cannot be imported in this interpreter
        "from hookbus.runners import PPOConfig\n"
        "config = PPOConfig().environment('CartPole-v1').training(train_batch_size=100, "
        "minibatch_size=50, num_epochs=1)\n"
        "with config.build() as algo: print(algo.train()['training_iteration'])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"


def test_the_seeds_examples_on_two_ray_runners(ray_ppo: PPOConfig) -> None:
    """The lambda, the stateful class and the Acrobot-style per-step data, in actors."""
    lengths: list[int] = []  # on the driver: the lambdas run in the actors (cloudpickled)
    config = ray_ppo.callbacks(
        process_helpers.EpisodeAndSampleCounts,  # stateful; checks theta1 per step in actors
        on_episode_end=lambda *, episode, metrics_logger, **kw: metrics_logger.log_value(
            "lambda_len", len(episode), reduce="sum", clear_on_reduce=True
        ),
        on_train_result=lambda *, result, **kw: lengths.append(result["env_runners"]["lambda_len"]),
    )
    with config.build() as algo:
        results = [algo.train() for _ in range(2)]
    for result in results:
        runners = result["env_runners"]
        assert runners["hook_sample"] == 2  # one sample() per actor per iteration
        assert runners["hook_step"] == runners["num_env_steps_sampled"] >= 200
        assert runners["hook_end"] == runners["num_episodes"] > 0
    # The on_episode_end lambda ran in the actors (its metric merged); on_train_result's on
    # the driver, once per iteration. Ended episodes hold at most the steps sampled so far.
    assert len(lengths) == 2
    assert 0 < lengths[0] <= results[0]["num_env_steps_sampled_lifetime"]


def test_multi_agent_episodes_come_back_from_actors() -> None:
    from hookbus.runners import MultiAgentCartPole

    config = (
        PPOConfig()
        .environment(MultiAgentCartPole, env_config={"num_agents": 2})
        .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=process_helpers.policy_of_agent)
        .env_runners(num_env_runners=2, backend="ray", num_cpus_per_env_runner=0.5)
        .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
        .callbacks(process_helpers.MultiAgentCounts)
        .debugging(seed=0)
    )
    with config.build() as algo:
        algo.train()
        result = algo.train()
    runners = result["env_runners"]
    assert runners["hook_step"] == runners["num_env_steps_sampled"] >= 200
    assert set(runners["agent_episode_returns_mean"]) == {"0", "1"}
    assert set(result["learners"]) == {"p0", "p1"}
