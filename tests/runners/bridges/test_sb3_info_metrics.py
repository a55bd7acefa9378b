"""InfoMetrics through the SB3 bridge, read back from SB3's own CSV output: each dump
holds numpy's reductions of the same infos over the window, and ``is_success`` equals
what SB3 itself makes of the same key (``rollout/success_rate``, over its last 100)."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.logger import configure

from hookbus.runners import InfoMetrics
from hookbus.runners.bridges import sb3_callback
from tests.runners.info_envs import FinalPositions, InfoCartPole, reduced

WINDOW = 10


@pytest.fixture(autouse=True)
def one_torch_thread() -> Iterator[None]:
    """Train on one thread: torch's threads slow these tiny networks down on shared CPUs."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_each_dump_in_sb3s_csv_is_numpy_over_the_window(tmp_path: Path) -> None:
    plain = FinalPositions()
    env = make_vec_env(InfoCartPole, n_envs=2, seed=0)
    model = PPO("MlpPolicy", env, n_steps=64, n_epochs=1, seed=0, device="cpu")
    logger = configure(str(tmp_path), ["csv"])
    model.set_logger(logger)
    bridge = sb3_callback(
        InfoMetrics({"x_position": ["min", "max", "mean", "sum"]}, window=WINDOW),
        InfoMetrics({"is_success": "mean"}),  # window 100, as SB3's own success rate
        plain,
    )
    try:
        model.learn(6 * 64 * 2, callback=bridge)  # a dump per rollout: 6 dumps
    finally:
        bridge.close()
        logger.close()
    with open(tmp_path / "progress.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    plain.check_infos()
    assert len(rows) == len(plain.at_result) == 6
    assert plain.at_result[-1] > WINDOW  # the window has slid
    for row, ended_then in zip(rows, plain.at_result, strict=True):
        positions = plain.positions[:ended_then]
        expected = reduced(positions, WINDOW)
        for reduction in ("min", "max", "mean", "sum"):
            assert float(row[f"x_position_{reduction}"]) == pytest.approx(expected[reduction])
        success = float(row["is_success"])
        assert success == pytest.approx(np.mean([x > 0.0 for x in positions[-100:]]))
        assert success == pytest.approx(float(row["rollout/success_rate"]))
