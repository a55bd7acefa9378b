"""RLlib's health names on EnvRunnerGroup: ``num_healthy_remote_env_runners()`` and
``probe_unhealthy_env_runners()`` (rllib/env/env_runner_group.py), sync as RLlib's."""

from __future__ import annotations

import pytest

from hookbus.runners import PPOConfig


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
