"""A replay of an SB3 bridge's recording follows SB3's log dumps: what the callbacks log
replays, dump by dump, to the values SB3 wrote in its CSV log.

Real SB3 (torch on the CPU): PPO with 1 and 4 sub-envs, DQN (whose dumps come in the middle
of a collection). Each run is recorded once per module; the assertions replay its file.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

import pytest
import stable_baselines3
import torch
from stable_baselines3 import DQN, PPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.logger import configure

from hookbus.kernel import read_recording_header, replay_into
from hookbus.runners.bridges import sb3_callback
from tests.runners.bridges.cycle_callbacks import SB3_KEYS, SB3Kinds

DUMPS = 3


class Run:
    """One bridged SB3 run, recorded to ``folder/run.msgpack``, logged to its CSV."""

    def __init__(self, folder: Path, algo: str, n_envs: int) -> None:
        self.path = folder / "run.msgpack"
        env = make_vec_env("CartPole-v1", n_envs=n_envs, seed=0)
        logger = configure(str(folder), ["csv"])
        bridge = sb3_callback(SB3Kinds, record=self.path)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # tiny networks on shared CPUs: one thread is fastest
        try:
            if algo == "DQN":
                model: Any = DQN("MlpPolicy", env, learning_starts=64, seed=0, device="cpu")
                model.set_logger(logger)
                model.learn(400, callback=bridge, log_interval=4)
            else:
                model = PPO("MlpPolicy", env, n_steps=64, n_epochs=1, seed=0, device="cpu")
                model.set_logger(logger)
                model.learn(64 * n_envs * DUMPS, callback=bridge)
        finally:
            torch.set_num_threads(threads)
            bridge.close()
            logger.close()
        with open(folder / "progress.csv", newline="") as file:
            self.rows = list(csv.DictReader(file))


@pytest.fixture(scope="module", params=[("PPO", 1), ("PPO", 4), ("DQN", 1)], ids=str)
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Run:
    algo, n_envs = request.param
    return Run(tmp_path_factory.mktemp(f"sb3_{algo}_{n_envs}"), algo, n_envs)


@pytest.fixture(autouse=True)
def sb3_logdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing SB3 makes by itself lands outside the test's folder."""
    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path / "sb3"))


def test_the_header_names_sb3_and_its_version(run: Run) -> None:
    header = read_recording_header(run.path)
    assert (header.producer, header.producer_version) == ("sb3", stable_baselines3.__version__)


def test_every_key_replays_to_each_dumps_logged_value(run: Run) -> None:
    replayed = replay_into(run.path, [SB3Kinds()])
    assert len(run.rows) >= DUMPS
    assert len(replayed.iterations) == len(run.rows)  # one per dump
    for i, (ours, row) in enumerate(zip(replayed.iterations, run.rows, strict=True)):
        for key in SB3_KEYS:
            logged = row[key]
            if logged == "":  # nothing logged yet (no episode ended before this dump)
                assert key not in ours, (i, key)
                continue
            assert ours[key] == pytest.approx(float(logged), rel=1e-9), (i, key, ours[key])


def test_per_dump_counts_are_per_dump_and_lifetime_sums_grow(run: Run) -> None:
    replayed = replay_into(run.path, [SB3Kinds()])
    dumps = [it["c_dumps_lifetime"] for it in replayed.iterations]
    assert dumps == list(range(1, len(run.rows) + 1))
    assert {it["c_dumps_cleared"] for it in replayed.iterations} == {1}
    steps = [it["c_steps_cleared"] for it in replayed.iterations]
    assert sum(steps) == replayed.iterations[-1]["c_steps_lifetime"]


def test_pooled_never_reduces(run: Run) -> None:
    pooled = replay_into(run.path, [SB3Kinds()], merge="pooled")
    cleared = [it["c_dumps_cleared"] for it in pooled.iterations]
    assert cleared == list(range(1, len(run.rows) + 1))  # a total over the replay
    framework = replay_into(run.path, [SB3Kinds()])
    for ours, theirs in zip(pooled.iterations, framework.iterations, strict=True):
        for key in ("c_return_w50", "c_return_max", "c_steps_lifetime"):  # untouched by reduce
            assert math.isclose(ours.get(key, 0.0), theirs.get(key, 0.0), rel_tol=1e-12)
