"""Which loop a runner samples with: the columnar one exactly when nobody listens per step.

The public tests (tests/runners/env_runner/test_columnar.py) check that both loops give the same
episodes; this checks that each is actually taken, per ``sample()`` call, and that the
columns grow past their first size without losing a row.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from hookbus.events import EpisodeStep
from hookbus.kernel import Bus
from hookbus.runners import EnvRunner, PPOConfig
from hookbus.runners.env_runner import _columns


@pytest.fixture
def columnar_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the columnar loop's runs (and the steps each recorded)."""
    calls: list[int] = []
    run = _columns.ColumnarLoop.run

    async def counted(self: Any, steps: int) -> int:
        recorded = await run(self, steps)
        calls.append(recorded)
        return recorded

    monkeypatch.setattr(_columns.ColumnarLoop, "run", counted)
    return calls


def make_runner(env: Any = "CartPole-v1", mode: str = "VECTOR_ENTRY_POINT") -> EnvRunner:
    config = PPOConfig().environment(env).debugging(seed=0)
    config.env_runners(num_envs_per_env_runner=4, gym_env_vectorize_mode=mode)
    return EnvRunner(config, bus=Bus())


def test_the_path_is_picked_per_call(columnar_calls: list[int]) -> None:
    def on_step(**kwargs: Any) -> None:
        pass

    runner = make_runner()
    try:
        runner.sample(num_timesteps=40, random_actions=True, exact=True)
        assert columnar_calls == [40]
        runner.bus.subscribe(EpisodeStep, on_step)
        runner.sample(num_timesteps=40, random_actions=True)
        assert columnar_calls == [40]  # someone listens per step: the per-step loop only
        runner.bus.unsubscribe(EpisodeStep, on_step)
        runner.sample(num_timesteps=40, random_actions=True, exact=True)
        assert columnar_calls == [40, 40]
    finally:
        runner.stop()


def test_a_connector_keeps_the_per_step_loop(columnar_calls: list[int]) -> None:
    runner = make_runner("FrozenLake-v1", "SYNC")  # Discrete observations: one-hot per row
    try:
        runner.sample(num_timesteps=20, random_actions=True)
    finally:
        runner.stop()
    assert columnar_calls == []


def test_columns_grow_and_keep_their_rows() -> None:
    columns = _columns.Columns(2)
    for t in range(5):
        obs = np.full((3, 2), t, np.float32)
        columns.put(t, obs, np.arange(3) + t, np.full(3, 0.5 * t), {"x": np.arange(3)} if t else {})
    assert columns.capacity == 8
    np.testing.assert_array_equal(columns.observations[:5, 1, 0], [0, 1, 2, 3, 4])

    class Sink:
        def add_steps(self, *args: Any) -> None:
            self.args = args

    sink = Sink()
    columns.flush(sink, 2, 0, 5, True, False)
    observations, actions, rewards, infos, terminated, truncated = sink.args
    assert [float(o[0]) for o in observations] == [0, 1, 2, 3, 4]
    assert actions.tolist() == [2, 3, 4, 5, 6]  # kept whole: the episode makes the lists
    assert rewards.tolist() == [0.0, 0.5, 1.0, 1.5, 2.0]
    assert infos == [{}, {"x": 2}, {"x": 2}, {"x": 2}, {"x": 2}]
    assert (terminated, truncated) == (True, False)
