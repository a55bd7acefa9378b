"""Training runners that fail (killed, env raising, hung) are replaced; nothing else is lost."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time
import weakref
from pathlib import Path
from typing import Any

import pytest

from hookbus.events import EpisodeEnd, EpisodeStep
from hookbus.kernel import ConfigError, Recorder, check_lifecycle, read_recording
from hookbus.runners import PPOConfig, RemoteError

sys.path.insert(0, str(Path(__file__).parents[1]))  # so worker processes import the helpers too
import process_helpers

FAULT_PLAN = "HOOKBUS_FAULT_PLAN"  # kills a worker at a named moment (for tests)


def faulty(
    small_ppo: PPOConfig, tmp_path: Path, *, how: str, backend: str = "process", **env: Any
) -> PPOConfig:
    """Two training runners; runner 1's first env fails ``how`` at its 30th step."""
    env_config = {"fail_on": [1], "how": how, "at_step": 30, "marker_dir": str(tmp_path), **env}
    return (
        small_ppo.environment(process_helpers.Faulty, env_config=env_config)
        .env_runners(num_env_runners=2, backend=backend)
        .fault_tolerance(delay_between_env_runner_restarts_s=0)
    )


def children() -> list[int]:
    return process_helpers.worker_processes(os.getpid())


def test_defaults_and_names_are_rllibs() -> None:
    config = PPOConfig()
    assert config.sample_timeout_s == 60.0
    assert config.env_runner_health_probe_timeout_s == 30.0
    assert config.restart_failed_sub_environments is False
    assert config.restart_failed_env_runners is True
    with pytest.raises(ConfigError, match=r"sample_timeout_s must be a number > 0 or None, got 0"):
        PPOConfig().environment("CartPole-v1").env_runners(sample_timeout_s=0).validate()
    with pytest.raises(ConfigError, match=r"env_runner_health_probe_timeout_s must be a number"):
        config.environment("CartPole-v1").fault_tolerance(
            env_runner_health_probe_timeout_s=-1
        ).validate()
    with pytest.raises(ConfigError, match=r"restart_failed_sub_environments must be True or"):
        PPOConfig().environment("CartPole-v1").fault_tolerance(
            restart_failed_sub_environments="yes"
        ).validate()


@pytest.mark.anyio
async def test_a_killed_worker_is_replaced_and_the_others_samples_kept(
    small_ppo: PPOConfig, tmp_path: Path
) -> None:
    config = faulty(small_ppo, tmp_path, how="kill").callbacks(
        [
            process_helpers.WorkerSide,
            process_helpers.Recreations(),
            process_helpers.EndsPerIteration(),
        ]
    )
    async with config.build() as algo:
        group = algo.env_runner_group
        pids = await group.aforeach_env_runner(process_helpers.worker_pid, local_env_runner=False)
        first = await algo.atrain()  # runner 1 kills itself (SIGKILL) at its 30th step
        assert group.healthy_env_runner_ids() == [2]
        second = await algo.atrain()  # it is restarted first, with the current weights
        assert group.healthy_env_runner_ids() == [1, 2]
        new_pids = await group.aforeach_env_runner(
            process_helpers.worker_pid, local_env_runner=False
        )
        recreations, ends = algo.bus.callbacks[1], algo.bus.callbacks[2]
    assert isinstance(recreations, process_helpers.Recreations)
    assert isinstance(ends, process_helpers.EndsPerIteration)
    assert first["env_runner_group"] == {
        "num_healthy_env_runners": 1,
        "num_remote_env_runner_restarts": 0,
    }
    # Runner 2 sampled runner 1's share as well: the learner got the whole batch.
    assert first["num_env_steps_sampled_lifetime"] >= 200
    # Nothing runner 2 sampled was lost; runner 1's unfinished request is gone.
    assert ends.ends[0]["env_runner:1"] == 0
    assert ends.ends[0]["env_runner:2"] == first["env_runners"]["num_episodes"]
    assert recreations.calls == [([1], False)]
    assert recreations.weights_match == [True]
    assert second["env_runner_group"] == {
        "num_healthy_env_runners": 2,
        "num_remote_env_runner_restarts": 1,
    }
    runner_counts = ("num_healthy_env_runners", "num_env_runner_restarts")
    assert [first["env_runners"][k] for k in runner_counts] == [1, 0]
    assert [second["env_runners"][k] for k in runner_counts] == [2, 1]
    assert new_pids[0] != pids[0]
    assert new_pids[1] == pids[1]
    # The restarted worker built its own callbacks again: they log from the new process.
    assert second["env_runners"]["episodes_seen"] > 0
    assert children() == []


def test_an_env_raising_in_step_fails_its_runner_only(small_ppo: PPOConfig, tmp_path: Path) -> None:
    config = faulty(small_ppo, tmp_path, how="raise").callbacks(process_helpers.Recreations())
    with config.build() as algo:
        first = algo.train()
        second = algo.train()
        recreations = algo.bus.callbacks[0]
    assert first["env_runner_group"]["num_healthy_env_runners"] == 1
    assert first["num_env_steps_sampled_lifetime"] >= 200
    assert second["env_runner_group"]["num_healthy_env_runners"] == 2
    assert recreations.calls == [([1], False)]  # type: ignore[attr-defined]
    assert children() == []


def test_inline_runners_are_restarted_too(small_ppo: PPOConfig, tmp_path: Path) -> None:
    config = faulty(small_ppo, tmp_path, how="raise", backend="inline")
    with config.callbacks(process_helpers.Recreations()).build() as algo:
        first = algo.train()
        second = algo.train()
        recreations = algo.bus.callbacks[0]
    assert first["env_runner_group"]["num_healthy_env_runners"] == 1
    assert second["env_runner_group"]["num_remote_env_runner_restarts"] == 1
    assert recreations.calls == [([1], False)]  # type: ignore[attr-defined]


def test_a_failed_in_process_runner_is_freed_once_replaced(
    small_ppo: PPOConfig, tmp_path: Path
) -> None:
    # Runner 1 fails in the middle of a sample(), episodes having ended in it: neither the
    # failure kept for a later error nor the built-in metrics may hold the dead runner.
    config = faulty(small_ppo, tmp_path, how="raise", backend="inline", at_step=60)
    with config.build() as algo:
        group = algo.env_runner_group
        (old,) = group.foreach_env_runner(
            lambda runner: (weakref.ref(runner), weakref.ref(runner.metrics)),
            remote_worker_ids=[1],
            local_env_runner=False,
        )
        first = algo.train()
        algo.train()
        gc.collect()
        assert first["env_runner_group"]["num_healthy_env_runners"] == 1
        assert group.healthy_env_runner_ids() == [1, 2]
        assert [ref() for ref in old] == [None, None]


def test_a_hung_worker_times_out_and_is_replaced(small_ppo: PPOConfig, tmp_path: Path) -> None:
    config = faulty(small_ppo, tmp_path, how="hang").env_runners(sample_timeout_s=2.0)
    with config.build() as algo:
        first = algo.train()  # about 2 s: runner 1 is given up on, runner 2 samples its share
        second = algo.train()
    assert first["env_runner_group"]["num_healthy_env_runners"] == 1
    assert first["num_env_steps_sampled_lifetime"] >= 200
    assert second["env_runner_group"] == {
        "num_healthy_env_runners": 2,
        "num_remote_env_runner_restarts": 1,
    }
    assert children() == []


@pytest.mark.parametrize(
    ("how", "error", "match"),
    [
        ("kill", RemoteError, r"env runner 1 \(worker process \d+\) died \(exit code -9\)"),
        ("raise", ValueError, r"env failed at step 30"),
        ("hang", RemoteError, r"did not sample 100 env steps within sample_timeout_s=1.0"),
    ],
)
def test_without_restarts_the_failure_names_runner_cause_and_setting(
    small_ppo: PPOConfig, tmp_path: Path, how: str, error: type[Exception], match: str
) -> None:
    config = (
        faulty(small_ppo, tmp_path, how=how)
        .fault_tolerance(restart_failed_env_runners=False)
        .env_runners(sample_timeout_s=1.0)
    )
    with config.build() as algo:
        with pytest.raises(error, match=match) as info:
            algo.train()
    notes = "\n".join(info.value.__notes__)
    assert "env runner 1 failed" in notes
    assert "fault_tolerance(restart_failed_env_runners=True) would have restarted it" in notes
    if how == "raise":
        assert "raised in env runner 1 (worker process" in notes
        assert "raised by the env's step()" in notes
    assert children() == []


def test_ignored_failures_train_on_without_the_runner(small_ppo: PPOConfig, tmp_path: Path) -> None:
    config = faulty(small_ppo, tmp_path, how="raise").fault_tolerance(
        restart_failed_env_runners=False, ignore_env_runner_failures=True
    )
    with config.build() as algo:
        results = [algo.train() for _ in range(3)]
        assert algo.env_runner_group.healthy_env_runner_ids() == [2]
    assert [r["env_runner_group"]["num_healthy_env_runners"] for r in results] == [1, 1, 1]
    assert all(r["num_env_steps_sampled_lifetime"] >= 200 * (i + 1) for i, r in enumerate(results))


def test_a_worker_killed_between_iterations_is_not_listed(
    small_ppo: PPOConfig, tmp_path: Path
) -> None:
    config = small_ppo.env_runners(num_env_runners=2, backend="process").fault_tolerance(
        delay_between_env_runner_restarts_s=0
    )
    with config.build() as algo:
        group = algo.env_runner_group
        pids = group.foreach_env_runner(process_helpers.worker_pid, local_env_runner=False)
        os.kill(pids[1], 9)
        deadline = time.monotonic() + 5
        while group.healthy_env_runner_ids() != [1] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert group.healthy_env_runner_ids() == [1]
        result = algo.train()  # restarted first
    assert result["env_runner_group"]["num_healthy_env_runners"] == 2


def test_a_failed_build_leaves_no_worker_behind(small_ppo: PPOConfig, tmp_path: Path) -> None:
    config = faulty(small_ppo, tmp_path, how="init").env_runners(num_env_runners=3)
    with pytest.raises(ValueError, match="env of runner 1 failed to start"):
        config.build()
    assert children() == []


def killed_while_starting(
    small_ppo: PPOConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **settings: Any
) -> PPOConfig:
    """Two worker processes; runner 1's first one is killed (SIGKILL) before making its env."""
    kill = {"runner": 1, "request": "setup", "at": "receipt", "marker": str(tmp_path / "kill")}
    monkeypatch.setenv(FAULT_PLAN, json.dumps([kill]))
    return (
        small_ppo.env_runners(num_env_runners=2, backend="process")
        .fault_tolerance(delay_between_env_runner_restarts_s=0, **settings)
        .callbacks(process_helpers.Recreations())
    )


def test_a_worker_killed_while_starting_is_restarted_like_any_failed_runner(
    small_ppo: PPOConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with killed_while_starting(small_ppo, tmp_path, monkeypatch).build() as algo:
        assert algo.env_runner_group.healthy_env_runner_ids() == [2]  # built all the same
        result = algo.train()  # restarted first, with the learner's weights
        recreations = algo.bus.callbacks[0]
    assert recreations.calls == [([1], False)]  # type: ignore[attr-defined]
    assert recreations.weights_match == [True]  # type: ignore[attr-defined]
    assert result["num_env_steps_sampled_lifetime"] >= 200
    assert result["env_runner_group"] == {
        "num_healthy_env_runners": 2,
        "num_remote_env_runner_restarts": 1,
    }
    assert children() == []


def test_a_worker_killed_while_starting_without_restarts_fails_the_build(
    small_ppo: PPOConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = killed_while_starting(
        small_ppo, tmp_path, monkeypatch, restart_failed_env_runners=False
    )
    with pytest.raises(
        RemoteError, match=r"env runner 1 \(worker process \d+\) died \(exit code -9\)"
    ) as info:
        config.build()
    assert "restart_failed_env_runners=True) would have restarted it" in "\n".join(
        info.value.__notes__
    )
    assert children() == []  # runner 2's worker, which started, is ended too


def test_a_worker_killed_while_starting_with_failures_ignored_is_left_out(
    small_ppo: PPOConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = killed_while_starting(
        small_ppo,
        tmp_path,
        monkeypatch,
        restart_failed_env_runners=False,
        ignore_env_runner_failures=True,
    )
    with config.build() as algo:
        results = [algo.train() for _ in range(2)]
        assert algo.env_runner_group.healthy_env_runner_ids() == [2]
    assert [r["env_runner_group"]["num_healthy_env_runners"] for r in results] == [1, 1]
    assert results[-1]["num_env_steps_sampled_lifetime"] >= 400


_DRIVER = """
import sys, time
sys.path.insert(0, {helpers!r})
import process_helpers
from hookbus.runners import PPOConfig
config = (
    PPOConfig()
    .environment(process_helpers.Faulty, env_config={{"fail_on": [1], "how": "hang", "at_step": 5}})
    .env_runners(num_env_runners=2, backend="process", sample_timeout_s=None)
    .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
)
algo = config.build()
print(*algo.env_runner_group.foreach_env_runner(process_helpers.worker_pid, local_env_runner=False))
sys.stdout.flush()
if {train}:
    algo.train()  # runner 1 hangs in env.step(), runner 2 waits for requests
time.sleep(3600)
"""


@pytest.mark.parametrize("train", [False, True], ids=["idle", "hung-in-step"])
def test_workers_exit_when_the_driver_is_killed(train: bool) -> None:
    code = _DRIVER.format(helpers=str(Path(__file__).parents[1]), train=train)
    driver = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert driver.stdout is not None
        pids = [int(pid) for pid in driver.stdout.readline().split()]
        assert len(pids) == 2
        time.sleep(1.0 if train else 0.2)  # let the hung step begin
        driver.kill()
        driver.wait()
        deadline = time.monotonic() + 10
        while any(map(process_helpers.alive, pids)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(map(process_helpers.alive, pids))
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
        driver.stdout.close()  # type: ignore[union-attr]


def test_restart_failed_sub_environments_truncates_only_the_faulty_episode(
    small_ppo: PPOConfig, tmp_path: Path
) -> None:
    env_config = {"fail_on": [0], "how": "raise", "at_step": 30, "marker_dir": str(tmp_path)}
    config = (
        small_ppo.environment(process_helpers.Faulty, env_config=env_config)
        .env_runners(num_envs_per_env_runner=2)
        .fault_tolerance(restart_failed_sub_environments=True)
        .callbacks(process_helpers.TruncatedEnds())
    )
    with config.build() as algo:
        result = algo.train()
        ends = algo.bus.callbacks[0]
    assert ends.failures == ["ValueError('env failed at step 30')"]  # type: ignore[attr-defined]
    assert result["num_env_steps_sampled_lifetime"] >= 200


def test_observers_of_a_killed_worker_keep_order_per_source(
    small_ppo: PPOConfig, tmp_path: Path
) -> None:
    seen: list[Any] = []
    config = faulty(small_ppo, tmp_path, how="kill")
    with config.build() as algo:
        algo.bus.subscribe(EpisodeEnd, lambda event, **kw: seen.append(event))
        algo.train()
        algo.train()
    by_source: dict[str, list[int]] = {}
    for event in seen:
        by_source.setdefault(event.source, []).append(event.seq)
    assert set(by_source) == {"env_runner:1", "env_runner:2"}
    for seqs in by_source.values():
        assert seqs == sorted(seqs)


def test_observers_never_see_the_events_of_a_request_that_failed(
    small_ppo: PPOConfig, tmp_path: Path
) -> None:
    # Runner 1's env raises at its 30th step: the 29 steps before it in that request are
    # dropped with its samples, so the observers see exactly the steps the learner got.
    steps: dict[str, int] = {}

    def count(event: EpisodeStep, **kwargs: Any) -> None:
        steps[event.source] = steps.get(event.source, 0) + 1

    with faulty(small_ppo, tmp_path, how="raise").build() as algo:
        algo.bus.subscribe(EpisodeStep, count)
        first = algo.train()
        assert first["env_runner_group"]["num_healthy_env_runners"] == 1  # runner 1 failed
        assert sum(steps.values()) == first["num_env_steps_sampled_lifetime"]
        second = algo.train()  # runner 1 restarted: its events arrive again
    assert sum(steps.values()) == second["num_env_steps_sampled_lifetime"]
    assert set(steps) == {"env_runner:1", "env_runner:2"}


@pytest.mark.parametrize(("backend", "how"), [("process", "kill"), ("inline", "raise")])
def test_a_recording_with_a_restart_keeps_the_lifecycle(
    small_ppo: PPOConfig, tmp_path: Path, backend: str, how: str
) -> None:
    # The restarted runner goes on numbering its source where the Algorithm's observers
    # left it; its on_environment_created marks the restart for check_lifecycle.
    path = tmp_path / "run.msgpack"
    config = faulty(small_ppo, tmp_path, how=how, backend=backend)
    with config.callbacks([Recorder(path), process_helpers.Recreations()]).build() as algo:
        algo.train()
        algo.train()
        recreations = algo.bus.callbacks[1]
    assert recreations.calls == [([1], False)]  # type: ignore[attr-defined]
    events = list(read_recording(path))
    seqs = [e.seq for e in events if e.source == "env_runner:1"]
    assert seqs == list(range(len(seqs)))  # one numbering, gap-free, across both lives
    summary = check_lifecycle(events)
    assert summary.restarts == 1
    # Runner 1 failed in its first sample request, in its first episode: an inline runner's
    # observers saw that episode start (it is abandoned); a worker's failed request brought
    # none of its events (dropped with its samples).
    assert summary.abandoned_episodes == (1 if backend == "inline" else 0)


def test_failure_tolerance_and_restore_timeout_defaults_and_bad_values() -> None:
    config = PPOConfig().environment("CartPole-v1")
    assert config.num_consecutive_env_runner_failures_tolerance == 100
    assert config.env_runner_restore_timeout_s == 1800.0
    config.fault_tolerance(
        num_consecutive_env_runner_failures_tolerance=0, env_runner_restore_timeout_s=0.5
    ).validate()
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(
            ConfigError,
            match=rf"num_consecutive_env_runner_failures_tolerance must be an int >= 0, "
            rf"got {bad!r}",
        ):
            config.fault_tolerance(num_consecutive_env_runner_failures_tolerance=bad).validate()
    config.fault_tolerance(num_consecutive_env_runner_failures_tolerance=100)
    for bad in (0, -5, None, "1800"):
        with pytest.raises(
            ConfigError, match=rf"env_runner_restore_timeout_s must be a number > 0, got {bad!r}"
        ):
            config.fault_tolerance(env_runner_restore_timeout_s=bad).validate()
    with pytest.raises(ConfigError, match=r"did you mean 'env_runner_restore_timeout_s'"):
        config.update_from_dict({"worker_restore_timeout_s": 60})


def always_failing(
    small_ppo: PPOConfig,
    *,
    fail_on: list[int],
    tolerance: int,
    backend: str = "inline",
    at_step: int = 30,
) -> PPOConfig:
    """Two runners whose first env raises at its ``at_step``th step in every runner
    ``fail_on`` names, restarted or not (no marker file)."""
    env_config = {"fail_on": fail_on, "how": "raise", "at_step": at_step}
    return (
        small_ppo.environment(process_helpers.Faulty, env_config=env_config)
        .env_runners(num_env_runners=2, backend=backend)
        .fault_tolerance(
            delay_between_env_runner_restarts_s=0,
            num_consecutive_env_runner_failures_tolerance=tolerance,
        )
    )


@pytest.mark.parametrize("backend", ["inline", "process"])
def test_more_failures_in_a_row_than_the_tolerance_are_raised(
    small_ppo: PPOConfig, backend: str
) -> None:
    # Both runners fail every round, so failures add up: 2, then 4 > 3.
    config = always_failing(small_ppo, fail_on=[1, 2], tolerance=3, backend=backend)
    with config.build() as algo:
        with pytest.raises(ValueError, match=r"env failed at step 30") as info:
            # Both fail: 2 in a row, tolerated; with no runner left both are restarted at
            # once to fill the batch, and both fail again: 4 in a row.
            algo.train()
    notes = "\n".join(info.value.__notes__)
    assert "4 env runner failures in a row, with no sample returned in between" in notes
    assert "num_consecutive_env_runner_failures_tolerance=3" in notes
    assert children() == []


@pytest.mark.parametrize(
    ("settings", "why"),
    [
        (
            {"delay_between_env_runner_restarts_s": 60.0},
            r"none may restart within sample_timeout_s=1.0 "
            r"\(delay_between_env_runner_restarts_s=60.0\)",
        ),
        (
            {"max_num_env_runner_restarts": 1},
            r"each was restarted max_num_env_runner_restarts=1 times",
        ),
        (
            {"restart_failed_env_runners": False, "ignore_env_runner_failures": True},
            r"config.fault_tolerance\(restart_failed_env_runners=False\) restarts none",
        ),
    ],
    ids=["delay-beyond-sample-timeout", "restarts-used-up", "restarts-off"],
)
def test_with_no_runner_left_one_error_names_the_runners_and_the_setting(
    small_ppo: PPOConfig, settings: dict[str, Any], why: str
) -> None:
    config = (
        always_failing(small_ppo, fail_on=[1, 2], tolerance=100)
        .env_runners(sample_timeout_s=1.0)
        .fault_tolerance(**settings)
    )
    with config.build() as algo:
        with pytest.raises(
            RemoteError,
            match=r"no env runner left to sample \d+ more of 200 "
            r"env steps: env runners 1, 2 failed; " + why,
        ) as info:
            algo.train()
    assert repr(info.value.__cause__) == "ValueError('env failed at step 30')"  # the last failure


def test_with_no_runner_left_they_are_restarted_once_their_delay_passed(
    small_ppo: PPOConfig, tmp_path: Path
) -> None:
    env_config = {"fail_on": [1, 2], "how": "raise", "at_step": 30, "marker_dir": str(tmp_path)}
    config = (
        small_ppo.environment(process_helpers.Faulty, env_config=env_config)
        .env_runners(num_env_runners=2)
        .fault_tolerance(delay_between_env_runner_restarts_s=0.5)
        .callbacks(process_helpers.Recreations())
    )
    with config.build() as algo:
        result = algo.train()  # both fail; they sit out half a second, then sample the batch
        recreations = algo.bus.callbacks[0]
    assert recreations.calls == [([1, 2], False)]  # type: ignore[attr-defined]
    assert recreations.weights_match == [True]  # type: ignore[attr-defined]
    steps = result["num_env_steps_sampled_lifetime"]
    assert steps >= 200
    assert result["env_runners"]["num_env_steps_sampled"] == steps
    assert result["env_runner_group"] == {
        "num_healthy_env_runners": 2,
        "num_remote_env_runner_restarts": 2,
    }


def test_a_sample_returned_in_between_resets_the_count(small_ppo: PPOConfig) -> None:
    # Runner 1's worker is killed every iteration; runner 2's samples come in between, so
    # never 2 in a row. (Kills: a runner failing alike 4 times in a row stops training.)
    env_config = {"fail_on": [1], "how": "kill", "at_step": 30}
    config = (
        small_ppo.environment(process_helpers.Faulty, env_config=env_config)
        .env_runners(num_env_runners=2, backend="process")
        .fault_tolerance(
            delay_between_env_runner_restarts_s=0,
            num_consecutive_env_runner_failures_tolerance=1,
        )
    )
    with config.build() as algo:
        results = [algo.train() for _ in range(4)]
    assert [r["env_runner_group"]["num_remote_env_runner_restarts"] for r in results] == [
        0,
        1,
        2,
        3,
    ]
    assert all(r["num_env_steps_sampled_lifetime"] >= 200 * (i + 1) for i, r in enumerate(results))


def faulty_line() -> str:
    """Where Faulty raises: the user's file, line and function, as errors name it."""
    return f"{process_helpers.__file__}:{process_helpers.line_of('# Faulty raises here')} in step"


@pytest.mark.parametrize("backend", ["inline", "process"])
def test_a_runner_failing_the_same_way_four_times_in_a_row_stops_training(
    small_ppo: PPOConfig, backend: str, caplog: pytest.LogCaptureFixture
) -> None:
    # An env bug: every runner's env raises at its 30th step, restarted or not (so after
    # 29 env steps). The defaults (1000 restarts, 100 failures in a row) would retry it
    # for long; the delay is 0 so that the test is quick.
    config = always_failing(small_ppo, fail_on=[1, 2], tolerance=100, backend=backend).callbacks(
        process_helpers.Recreations()
    )
    where = faulty_line()
    with config.build() as algo:
        with pytest.raises(ValueError, match=r"^env failed at step 30\n") as info:
            algo.train()
        recreations = algo.bus.callbacks[0]
    notes = "\n".join(info.value.__notes__)
    assert (
        "failed the same way 4 times in a row, each time 29 env steps after it was made "
        f"(ValueError: env failed at step 30 (at {where})); a restart would fail again"
    ) in notes
    assert "max_num_env_runner_restarts=1000" in notes
    assert recreations.calls == [([1, 2], False)] * 3  # type: ignore[attr-defined]
    # Each runner's first failure names the user's line once; the next ones only say so.
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    first = [w for w in warnings if "failed; going on without it: ValueError" in w]
    assert len(first) == 2
    assert all(w.count(where) == 1 for w in first)
    again = [
        w
        for w in warnings
        if "failed the same way again, 29 env steps after it was made (" in w
        and "times in a row; 4 stop training)" in w
    ]
    assert len(again) == 4  # each runner's 2nd and 3rd
    assert sum(where in w for w in warnings) == 2
    assert children() == []


def test_a_runner_failing_alike_stops_training_though_the_others_sample(
    small_ppo: PPOConfig,
) -> None:
    # Runner 2's samples break the failures in a row of the group, not runner 1's own.
    config = always_failing(small_ppo, fail_on=[1], tolerance=100)
    with config.build() as algo:
        results = [algo.train() for _ in range(3)]
        with pytest.raises(ValueError, match=r"^env failed at step 30\n") as info:
            algo.train()
    restarts = [r["env_runner_group"]["num_remote_env_runner_restarts"] for r in results]
    assert restarts == [0, 1, 2]
    assert "env runner 1 failed the same way 4 times in a row" in "\n".join(info.value.__notes__)


def test_restarts_failing_the_same_way_four_times_in_a_row_stop_training(
    small_ppo: PPOConfig, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Runner 1's env raises in step() once; then its constructor raises in every new runner.
    config = faulty(small_ppo, tmp_path, how="raise", backend="inline", then_init=True)
    with config.build() as algo:
        results = [algo.train() for _ in range(4)]  # 1: fails; 2 to 4: its restart fails
        with pytest.raises(ValueError, match=r"^env of runner 1 cannot start again\n") as info:
            algo.train()  # 5: its restart fails alike a fourth time
    assert [r["env_runner_group"]["num_healthy_env_runners"] for r in results] == [1] * 4
    where = f"{process_helpers.__file__}:{process_helpers.line_of('# Faulty restarts')} in __init__"
    notes = "\n".join(info.value.__notes__)
    assert "env runner 1 failed the same way 4 times in a row, each time before its" in notes
    assert where in notes
    restarts = [
        r.getMessage() for r in caplog.records if "restarting env runner 1" in r.getMessage()
    ]
    assert len(restarts) == 3
    assert restarts[0].endswith(
        f"failed: ValueError: env of runner 1 cannot start again (at {where})"
    )
    assert restarts[2].endswith(
        "failed the same way again, before its first env step (3 times in a row; 4 stop training)"
    )


def test_failures_alike_with_a_sample_in_between_are_in_a_row(small_ppo: PPOConfig) -> None:
    # Runner 1's env raises at its 150th step, every time: a new runner samples its 100
    # steps, then fails in the next iteration, 149 steps after it was made. A sample
    # comes between any two failures, yet each new runner fails at the same point: a bug,
    # which stops training at its fourth failure (until issue 46, a sample in between
    # broke the row, and this went on restarting).
    config = always_failing(small_ppo, fail_on=[1], tolerance=100, at_step=150)
    with config.build() as algo:
        results = [algo.train() for _ in range(7)]
        with pytest.raises(ValueError, match=r"^env failed at step 150\n") as info:
            algo.train()
    restarts = [r["env_runner_group"]["num_remote_env_runner_restarts"] for r in results]
    assert restarts == [0, 0, 1, 1, 2, 2, 3]
    healthy = [r["env_runner_group"]["num_healthy_env_runners"] for r in results]
    assert healthy == [2, 1, 2, 1, 2, 1, 2]
    assert "failed the same way 4 times in a row, each time 149 env steps after it was made" in (
        "\n".join(info.value.__notes__)
    )


def test_tolerance_zero_raises_the_first_failure_despite_restarts(small_ppo: PPOConfig) -> None:
    config = always_failing(small_ppo, fail_on=[1], tolerance=0)
    with config.build() as algo:
        with pytest.raises(ValueError, match=r"env failed at step 30") as info:
            algo.train()
    assert "num_consecutive_env_runner_failures_tolerance=0" in "\n".join(info.value.__notes__)


def test_a_sub_env_failing_more_often_in_a_row_than_the_tolerance_fails(
    small_ppo: PPOConfig,
) -> None:
    # Every new sub-env 0 raises at its first step: restarting it cannot help.
    env_config = {"fail_on": [0], "how": "raise", "at_step": 1}
    config = (
        small_ppo.environment(process_helpers.Faulty, env_config=env_config)
        .env_runners(num_envs_per_env_runner=2)
        .fault_tolerance(
            restart_failed_sub_environments=True, num_consecutive_env_runner_failures_tolerance=3
        )
        .callbacks(process_helpers.TruncatedEnds())
    )
    with config.build() as algo:
        with pytest.raises(ValueError, match=r"env failed at step 1") as info:
            algo.train()
        ends = algo.bus.callbacks[0]
    assert len(ends.failures) == 3  # type: ignore[attr-defined]
    notes = "\n".join(info.value.__notes__)
    assert "this sub-env failed 4 times in a row" in notes
    assert "num_consecutive_env_runner_failures_tolerance=3" in notes


def test_a_restore_slower_than_its_timeout_fails_the_restart(
    small_ppo: PPOConfig, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    marker = str(tmp_path / "failed-1")
    config = (
        faulty(small_ppo, tmp_path, how="raise")
        .fault_tolerance(env_runner_restore_timeout_s=1.0)
        .callbacks([process_helpers.SlowToRestore(marker), process_helpers.Recreations()])
    )
    with config.build() as algo:
        algo.train()  # runner 1 fails
        second = algo.train()  # its restart starts, then hangs loading the weights: given up
        recreations = algo.bus.callbacks[1]
    assert second["env_runner_group"] == {
        "num_healthy_env_runners": 1,
        "num_remote_env_runner_restarts": 1,
    }
    assert recreations.calls == []  # type: ignore[attr-defined]
    assert "did not load the learner's weights within env_runner_restore_timeout_s=1.0" in (
        caplog.text
    )
    assert children() == []
