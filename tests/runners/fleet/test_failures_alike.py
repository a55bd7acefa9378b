"""Failures alike (``fleet/_repeats``): random crashes are restarted, bugs stop training.

First RLlib's ``test_on_env_runners_recreated_callback``
(rllib/callbacks/tests/test_callbacks_on_algorithm.py), ported: RLlib's CartPoleCrashing
raises from one line with one message at random steps, its runners are restarted and
training goes on. Then bugs that fail every new runner at the same point, which stop
training with their error, naming the user's line: raising at every step (RLlib's own
test as it is, ``p_crash=1.0``), at step 150 of every episode (after samples came back),
in the env's constructor.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from hookbus.runners import PPOConfig
from tests.runners.rllib_examples import rllib_example_envs
from tests.runners.rllib_examples.rllib_example_envs import CartPoleCrashing, EnvError

BACKENDS = ["inline", "process"]


def line(path: str, text: str) -> str:
    """Where ``text`` (a line's end) is in ``path``, as errors name a user's line."""
    lines = Path(path).read_text().splitlines()
    number = next(i for i, source in enumerate(lines, 1) if source.endswith(text))
    return f"{path}:{number}"


CRASH_LINE = line(
    rllib_example_envs.__file__, 'raise EnvError(f"simulated crash in {where} on worker {worker}")'
)


# --- RLlib's test, ported ----------------------------------------------------------------------


def on_env_runners_recreated(
    algorithm,
    env_runner_group,
    env_runner_indices,
    is_evaluation,
    **kwargs,
):
    # RLlib's handler, as it is.
    # Store in the algorithm object's counters the number of times, this worker
    # (ID'd by index and whether eval or not) has been recreated/restarted.
    for id_ in env_runner_indices:
        key = f"{'eval_' if is_evaluation else ''}worker_{id_}_recreated"
        # Increase the counter.
        algorithm.metrics.log_value(key, 1, reduce="sum")
        print(f"changed {key} to {algorithm._counters[key]}")

    # Execute some dummy code on each of the recreated workers.
    results = env_runner_group.foreach_env_runner(lambda w: w.ping())
    print(results)  # should print "pong" n times (one for each recreated worker).


def crashing_ppo(p_crash: float, backend: str) -> PPOConfig:
    """RLlib's config: three runners of CartPoleCrashing, restarted at once."""
    from ray import tune

    tune.register_env("env", lambda cfg: CartPoleCrashing(cfg))
    return (
        PPOConfig()
        .environment("env", env_config={"p_crash": p_crash})
        .callbacks(on_env_runners_recreated=on_env_runners_recreated)
        .env_runners(num_env_runners=3, backend=backend)
        .fault_tolerance(
            restart_failed_env_runners=True,
            delay_between_env_runner_restarts_s=0,
        )
    )


def test_on_env_runners_recreated_callback() -> None:
    # On hookbus's default backend ("inline"), as RLlib's config has none: some 46
    # restarts, each a new worker process under "process" (90 s here). The failures
    # alike at random points of the last test cross from worker processes too.
    # Two changes to RLlib's config. p_crash is 0.01, where RLlib's is 1.0: a crash at
    # every step is a bug, which stops training here (the next test). And each runner
    # samples 200 env steps a request, not 1334 (train_batch_size=4000 over 3 runners):
    # at 1% a step, 1334 steps pass without a crash once in 670,000 requests, so none
    # would return, and training would stop at the 101st failure in a row
    # (num_consecutive_env_runner_failures_tolerance=100) where RLlib's iterations go on
    # sampling nothing. 200, not 100: with requests failing 63% of the time, some runner
    # is restarted only once in the three iterations in 9% of runs (18 of 200), and
    # RLlib's "> 1" below fails; at 87%, 300 runs of 300 passed (the fewest restarts of
    # a runner: 2; of the three: 9 to 103, 46 on average). RLlib's time.sleep(15.0)
    # after each iteration waits for nothing here (restarts are done when train()
    # returns).
    config = crashing_ppo(0.01, "inline").training(train_batch_size=600)

    algo = config.build()
    try:
        run_rllibs_test(algo)
    finally:
        algo.stop()


def run_rllibs_test(algo: Any) -> None:
    """RLlib's test from its build on (``algo.stop()`` is the caller's)."""
    with pytest.warns(DeprecationWarning, match="healthy_env_runner_ids"):  # hookbus warns
        original_env_runner_ids = algo.env_runner_group.healthy_worker_ids()
    for id_ in original_env_runner_ids:
        assert algo.metrics.peek(f"worker_{id_}_recreated", default=0) == 0
    assert algo.metrics.peek("total_num_workers_recreated", default=0) == 0

    # After building the algorithm, we should have 2 healthy (remote) workers.
    assert len(original_env_runner_ids) == 3

    # Train a bit (and have the envs/workers crash).
    for _ in range(3):
        print(algo.train())

    algo.restore_env_runners(algo.env_runner_group)
    # After training, the `on_workers_recreated` callback should have captured
    # the exact worker IDs recreated (the exact number of times) as the actor
    # manager itself. This confirms that the callback is triggered correctly,
    # always.
    with pytest.warns(DeprecationWarning, match="healthy_env_runner_ids"):
        new_worker_ids = algo.env_runner_group.healthy_worker_ids()
    assert len(new_worker_ids) == 3
    for id_ in new_worker_ids:
        assert algo.metrics.peek(f"worker_{id_}_recreated") > 1


# --- bugs: every new runner fails at the same point --------------------------------------------


def the_note(exc: BaseException) -> str:
    notes = "\n".join(getattr(exc, "__notes__", []))
    assert notes.count("failed the same way 4 times in a row") == 1, notes
    return notes


def test_rllibs_test_as_it_is_stops_at_its_first_iteration_naming_the_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # p_crash=1.0, RLlib's: every runner's env raises at its first step, restarted or not.
    config = crashing_ppo(1.0, "inline")
    with config.build() as algo:
        with pytest.raises(EnvError, match=r"^simulated crash in step\(\) on worker 1\n") as info:
            algo.train()
        recreated = {i: algo.metrics.peek(f"worker_{i}_recreated") for i in (1, 2, 3)}
    assert recreated == {1: 3, 2: 3, 3: 3}  # 4 failures each, 3 restarts in between
    notes = the_note(info.value)
    assert (
        "env runner 1 failed the same way 4 times in a row, each time before its first env "
        f"step (EnvError: simulated crash in step() on worker 1 (at {CRASH_LINE} in "
        "_maybe_fail)); a restart would fail again"
    ) in notes
    assert "hookbus: 2 more failed as well: EnvError: simulated crash in step() on worker 2" in (
        notes
    )
    # Each runner's first failure is logged with the line, the next ones as alike.
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert sum(CRASH_LINE in w for w in warnings) == 3
    again = "failed the same way again, before its first env step ({} times in a row; 4 stop"
    assert [sum(again.format(n) in w for w in warnings) for n in (2, 3)] == [3, 3]


class LongEpisodes(gym.Env[np.ndarray, int]):
    """Episodes of 200 steps, whose step 150 raises (a bug in the env)."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, config: Any = None) -> None:
        self.t = 0

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.t += 1
        if self.t == 150:
            raise IndexError(f"no entry {self.t} in the schedule")  # LongEpisodes raises here
        return self._obs(), 1.0, False, self.t == 200, {}

    def _obs(self) -> np.ndarray:
        return np.array([self.t / 200, 0.0], np.float32)


def two_runners(small_ppo: PPOConfig, env: Any, backend: str, **env_config: Any) -> PPOConfig:
    """Two runners sampling 100 env steps per request, restarted at once."""
    return (
        small_ppo.environment(env, env_config=env_config)
        .env_runners(num_env_runners=2, backend=backend)
        .fault_tolerance(delay_between_env_runner_restarts_s=0)
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bug_at_step_150_of_every_episode_stops_though_samples_came_in_between(
    small_ppo: PPOConfig, backend: str
) -> None:
    # Each new runner returns its first 100 steps, then fails in its next request, at its
    # 150th step: 149 steps sampled, each time.
    config = two_runners(small_ppo, LongEpisodes, backend)
    with config.build() as algo:
        results = [algo.train() for _ in range(4)]
        with pytest.raises(IndexError, match=r"^no entry 150 in the schedule\n") as info:
            algo.train()
    # Iterations 2 to 4: both fail, are restarted at once and sample the batch.
    assert [r["env_runner_group"]["num_remote_env_runner_restarts"] for r in results] == [
        0,
        2,
        4,
        6,
    ]
    assert all(r["env_runners"]["num_env_steps_sampled"] >= 200 for r in results)
    where = line(__file__, "# LongEpisodes raises here")
    assert (
        "failed the same way 4 times in a row, each time 149 env steps after it was made "
        f"(IndexError: no entry 150 in the schedule (at {where} in step))"
    ) in the_note(info.value)


class BreaksOnRestart(gym.Env[np.ndarray, int]):
    """CartPole on worker 1 breaks at its 30th step something its constructor needs:
    every new env of worker 1 then raises while it is made (a bug in the constructor)."""

    def __init__(self, config: Any) -> None:
        self.env = gym.make("CartPole-v1")
        self.observation_space = self.env.observation_space
        self.action_space = self.env.action_space
        self.broken = os.path.join(config["marker_dir"], "broken")
        self.mine = config.worker_index == 1 and not config.in_evaluation
        if self.mine and os.path.exists(self.broken):
            raise OSError(f"cannot open {self.broken!r}")  # BreaksOnRestart raises here
        self.steps = 0

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        return self.env.reset(seed=seed, options=options)

    def step(self, action: int) -> Any:
        self.steps += 1
        if self.mine and self.steps == 30:
            Path(self.broken).touch()
            raise RuntimeError("the simulator went away")
        return self.env.step(action)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_constructor_that_raises_in_every_new_runner_stops_training(
    small_ppo: PPOConfig, backend: str, tmp_path: Path
) -> None:
    config = two_runners(small_ppo, BreaksOnRestart, backend, marker_dir=str(tmp_path))
    with config.build() as algo:
        # 1: runner 1 fails at its 30th step; 2 to 4: its restart fails; runner 2 samples.
        results = [algo.train() for _ in range(4)]
        with pytest.raises(OSError, match=r"^cannot open '.*broken'\n") as info:
            algo.train()  # 5: its restart fails alike a fourth time
    assert [r["env_runner_group"]["num_healthy_env_runners"] for r in results] == [1] * 4
    assert all(r["env_runners"]["num_env_steps_sampled"] >= 200 for r in results)
    where = line(__file__, "# BreaksOnRestart raises here")
    assert (
        "env runner 1 failed the same way 4 times in a row, each time before its first env "
        f"step (OSError: cannot open {str(tmp_path / 'broken')!r} (at {where} in __init__))"
    ) in the_note(info.value)


# --- what ends a row, and what does not ---------------------------------------------------------


class CrashesAt(gym.Env[np.ndarray, int]):
    """A runner's env that raises at the steps ``env_config["at"]`` lists, one per new
    runner in turn (a file counts the runners made): the same line, the same message."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, config: Any) -> None:
        self.at: int | None = None
        if config.worker_index == 1 and not config.in_evaluation:
            counter = Path(config["marker_dir"]) / "made"
            made = int(counter.read_text()) if counter.exists() else 0
            counter.write_text(str(made + 1))
            plan = config["at"]
            self.at = plan[made] if made < len(plan) else None
        self.steps = 0

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        return np.zeros(1, np.float32), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.steps += 1
        if self.steps == self.at:
            raise EnvError("simulated crash")
        return np.zeros(1, np.float32), 1.0, False, self.steps % 20 == 0, {}


@pytest.mark.parametrize("backend", BACKENDS)
def test_failures_alike_at_different_points_never_stop_training(
    small_ppo: PPOConfig, backend: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Runner 1 fails 6 times from the same line with the same message, at its steps 5, 5,
    # 5, 7, 7, 7: never 4 times at one point (restarts with samples between some of them).
    plan = [5, 5, 5, 7, 7, 7]
    config = two_runners(small_ppo, CrashesAt, backend, marker_dir=str(tmp_path), at=plan)
    with caplog.at_level(logging.WARNING, logger="hookbus"), config.build() as algo:
        results = [algo.train() for _ in range(8)]
    assert results[-1]["env_runner_group"] == {
        "num_healthy_env_runners": 2,
        "num_remote_env_runner_restarts": 6,
    }
    warnings = [r.getMessage() for r in caplog.records if "env runner 1 (" in r.getMessage()]
    rows = [w.split(") failed", 1)[1].split(" (", 1)[0] for w in warnings]
    assert rows == [
        "; going on without it: EnvError: simulated crash",
        " the same way again, 4 env steps after it was made",
        " the same way again, 4 env steps after it was made",
        "; going on without it: EnvError: simulated crash",
        " the same way again, 6 env steps after it was made",
        " the same way again, 6 env steps after it was made",
    ]
