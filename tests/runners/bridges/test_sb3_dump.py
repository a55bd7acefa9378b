"""What ``on_train_result`` handlers log reaches SB3's log in that same dump, read back from
SB3's own CSV output: PPO (1 and 4 sub-envs) and DQN, sync and async handlers."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import torch
from stable_baselines3 import DQN, PPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.logger import configure

from hookbus.runners.bridges import sb3_callback

LOGGED = ("hb/lifetime", "hb/per_dump", "hb/window2", "hb/episodes")
"""The keys the handlers below log (their values change from dump to dump)."""


@pytest.fixture(autouse=True)
def one_torch_thread() -> Iterator[None]:
    """Train on one thread: torch's threads slow these tiny networks down on shared CPUs."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def log_at_result(metrics_logger: Any, iteration: int) -> None:
    metrics_logger.log_value(("hb", "lifetime"), 1, reduce="lifetime_sum")
    metrics_logger.log_value(("hb", "per_dump"), 1, reduce="sum", clear_on_reduce=True)
    metrics_logger.log_value(("hb", "window2"), iteration, window=2)


def train_logged(
    algo: str, n_envs: int, handler: str, folder: Path
) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    """Train with an ``on_train_result`` handler (``handler``: "sync" or the async loop's
    name) and an episode counter; return SB3's CSV rows and the results the handler saw."""
    seen: list[dict[str, Any]] = []

    def on_train_result(*, event: Any, result: dict[str, Any], metrics_logger: Any) -> None:
        seen.append(dict(result))
        log_at_result(metrics_logger, event.training_iteration)

    async def on_train_result_async(
        *, event: Any, result: dict[str, Any], metrics_logger: Any
    ) -> None:
        seen.append(dict(result))
        await anyio.sleep(0.001)  # really waits on the loop before logging
        log_at_result(metrics_logger, event.training_iteration)

    def on_episode_end(*, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value(("hb", "episodes"), 1, reduce="sum", clear_on_reduce=True)

    env = make_vec_env("CartPole-v1", n_envs=n_envs, seed=0)
    if algo == "PPO":  # one dump per rollout of 64 steps per sub-env: 4 dumps
        model: Any = PPO("MlpPolicy", env, n_steps=64, n_epochs=1, seed=0, device="cpu")
        steps, log_interval = 4 * 64 * n_envs, 1
    else:  # one dump every 3 episodes, mid-collection
        model = DQN("MlpPolicy", env, learning_starts=64, seed=0, device="cpu")
        steps, log_interval = 600, 3
    logger = configure(str(folder), ["csv"])
    model.set_logger(logger)
    bridge = sb3_callback(
        on_train_result=on_train_result if handler == "sync" else on_train_result_async,
        on_episode_end=on_episode_end,
        async_backend="asyncio" if handler == "sync" else handler,
    )
    try:
        model.learn(steps, callback=bridge, log_interval=log_interval)
    finally:
        bridge.close()
        logger.close()
    with open(folder / "progress.csv", newline="") as file:
        return list(csv.DictReader(file)), seen


@pytest.mark.parametrize("handler", ["sync", "asyncio", "trio"])
@pytest.mark.parametrize(("algo", "n_envs"), [("PPO", 1), ("PPO", 4), ("DQN", 1)])
def test_what_on_train_result_logs_is_in_that_same_dump(
    algo: str, n_envs: int, handler: str, tmp_path: Path
) -> None:
    rows, seen = train_logged(algo, n_envs, handler, tmp_path)
    dumps = len(rows)
    assert dumps == 4 or (algo == "DQN" and dumps > 4)
    assert len(seen) == dumps
    assert [int(row["hb/lifetime"]) for row in rows] == list(range(1, dumps + 1))
    assert [int(row["hb/per_dump"]) for row in rows] == [1] * dumps
    # A window of 2 over the dumps' numbers: 1, then (n - 1 + n) / 2.
    expected = [1.0] + [n - 0.5 for n in range(2, dumps + 1)]
    assert [float(row["hb/window2"]) for row in rows] == pytest.approx(expected)
    # Every other value is what was recorded before the handlers ran (result as they saw
    # it): SB3's keys and what was logged at episodes' ends since the previous dump.
    for row, result in zip(rows, seen, strict=True):
        before = {key: value for key, value in result.items() if key not in LOGGED[:3]}
        assert {key: row[key] for key in before} == {k: str(v) for k, v in before.items()}
        assert int(row["time/total_timesteps"]) > 0
    episodes = sum(int(row["hb/episodes"]) for row in rows if row["hb/episodes"])
    assert 0 < episodes
    if algo == "DQN":  # a dump every 3 episodes: each counts the 3 since the previous one
        assert [int(row["hb/episodes"]) for row in rows] == [3] * dumps


def test_the_recorded_result_is_what_sb3_wrote_in_that_dump(tmp_path: Path) -> None:
    # A handler logs into the metrics and adds a key to result: both are in SB3's row of
    # that dump, and the recording's TrainResult holds that row (it was copied before the
    # handlers ran, missing what they added).
    from hookbus.events import TrainResult
    from hookbus.kernel import read_recording

    def on_train_result(*, event: Any, result: dict[str, Any], metrics_logger: Any) -> None:
        log_at_result(metrics_logger, event.training_iteration)
        result["hb/added"] = 10 * event.training_iteration

    env = make_vec_env("CartPole-v1", n_envs=2, seed=0)
    model = PPO("MlpPolicy", env, n_steps=64, n_epochs=1, seed=0, device="cpu")
    logger = configure(str(tmp_path), ["csv"])
    model.set_logger(logger)
    path = tmp_path / "run.msgpack"
    bridge = sb3_callback(on_train_result=on_train_result, record=path)
    try:
        model.learn(3 * 64 * 2, callback=bridge, log_interval=1)
    finally:
        bridge.close()
        logger.close()
    with open(tmp_path / "progress.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    recorded = [e.result for e in read_recording(path) if isinstance(e, TrainResult)]
    assert len(recorded) == len(rows) == 3
    for i, (row, result) in enumerate(zip(rows, recorded, strict=True), start=1):
        assert result["hb/added"] == 10 * i
        assert result["hb/lifetime"] == i
        assert result["hb/per_dump"] == 1
        assert {key: row[key] for key in result} == {k: str(v) for k, v in result.items()}
