"""RLlib's health names on EnvRunnerGroup: ``num_healthy_remote_env_runners()`` and
``probe_unhealthy_env_runners()`` (rllib/env/env_runner_group.py), sync as RLlib's."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from hookbus.runners import PPOConfig

sys.path.insert(0, str(Path(__file__).parents[1]))  # so worker processes import the helpers too
import process_helpers


@pytest.mark.parametrize("backend", ["inline", "process"])
def test_healthy_runners_are_counted_and_a_probe_brings_none_back(
    small_ppo: PPOConfig, backend: str
) -> None:
    config = small_ppo.env_runners(num_env_runners=2, backend=backend).fault_tolerance(
        restart_failed_env_runners=True
    )
    with config.build() as algo:
        group = algo.env_runner_group
        assert group.num_healthy_remote_env_runners() == 2
        assert group.probe_unhealthy_env_runners() == []
        assert group.probe_unhealthy_env_runners(timeout_seconds=5.0) == []
        assert group.num_healthy_remote_env_runners() == 2


def test_a_probe_restarts_a_runner_whose_worker_died(small_ppo: PPOConfig) -> None:
    config = small_ppo.env_runners(num_env_runners=2, backend="process").fault_tolerance(
        delay_between_env_runner_restarts_s=0
    )
    with config.build() as algo:
        group = algo.env_runner_group
        pids = group.foreach_env_runner(process_helpers.worker_pid, local_env_runner=False)
        os.kill(pids[1], signal.SIGKILL)
        deadline = time.monotonic() + 5
        while group.num_healthy_remote_env_runners() != 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert group.num_healthy_remote_env_runners() == 1
        assert group.probe_unhealthy_env_runners(timeout_seconds=30.0) == [2]
        assert group.num_healthy_remote_env_runners() == 2
        assert group.num_remote_worker_restarts() == 1
        assert len(group.foreach_env_runner(lambda r: r.ping())) == 3
