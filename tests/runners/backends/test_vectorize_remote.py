"""Vectorize modes in worker processes and Ray actors: recorded and replayed exactly."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hookbus.kernel import Recorder, check_lifecycle, read_recording, replay_into
from hookbus.runners import PPOConfig

sys.path.insert(0, str(Path(__file__).parents[1]))  # so workers import the helpers too
import vector_helpers

KINDS = {"ASYNC": "AsyncVectorEnv", "VECTOR_ENTRY_POINT": "CartPoleVectorEnv"}


@pytest.mark.parametrize("mode", ["ASYNC", "VECTOR_ENTRY_POINT"])
@pytest.mark.parametrize("backend", ["process", "ray"])
def test_remote_runners_sample_in_the_mode_and_replay_exactly(
    tmp_path: Path, mode: str, backend: str, request: pytest.FixtureRequest
) -> None:
    if backend == "ray":
        request.getfixturevalue("ray_cluster")
    path = tmp_path / "run.msgpack"
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(
            num_env_runners=1,
            num_envs_per_env_runner=2,
            backend=backend,
            gym_env_vectorize_mode=mode,
        )
        .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
        .callbacks([Recorder(path), vector_helpers.Returns])
        .debugging(seed=0)
    )
    with config.build() as algo:
        result = algo.train()
        kinds = algo.env_runner_group.foreach_env_runner(
            vector_helpers.vector_kind, local_env_runner=False
        )
    assert kinds == [(mode, KINDS[mode])]
    sampled = result["env_runners"]
    assert sampled["num_env_steps_sampled"] >= 200
    assert check_lifecycle(read_recording(path)).episodes >= 5
    replayed = replay_into(path, vector_helpers.Returns, sources=["env_runner:1"])
    for key in ("ret", "steps", "first_obs"):
        assert replayed.logger.peek(key) == sampled[key], key
