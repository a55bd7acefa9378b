"""Turn what an env already reports in its infos into metrics, in one line; replay them.

Run: ``python docs/examples/info_metrics.py``. docs/metrics.md ("Metrics from infos")
quotes this file.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import gymnasium as gym

from hookbus.kernel import Recorder, replay_into
from hookbus.runners import InfoMetrics, PPOConfig, register_env


class CartPoleWithInfo(gym.Wrapper):  # type: ignore[type-arg]
    """CartPole whose infos say where the cart is, and whether it is right of the centre."""

    def __init__(self, config: Any = None) -> None:
        super().__init__(gym.make("CartPole-v1"))

    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = self.env.step(action)
        info = {**info, "x_position": float(obs[0]), "is_success": bool(obs[0] > 0.0)}
        return obs, reward, terminated, truncated, info


def main(folder: Path) -> None:
    register_env("cartpole_with_info", CartPoleWithInfo)
    metrics = InfoMetrics({"is_success": "mean", "x_position": ["min", "max", "mean"]}, window=20)
    path = folder / "run.msgpack"
    config = (
        PPOConfig()
        .environment("cartpole_with_info")
        .training(train_batch_size=500, minibatch_size=100, num_epochs=1)
        .debugging(seed=0)
        .callbacks(callbacks_class=[metrics, Recorder(path)])
    )
    keys = ("is_success", "x_position_min", "x_position_max", "x_position_mean")
    with config.build() as algo:
        for _ in range(3):
            runners = algo.train()["env_runners"]
            print(
                {key: round(runners[key], 3) for key in keys}, runners["num_episodes"], "episodes"
            )
    print("episodes without a key:", metrics.missing)

    # The same callback, fed from the recording (no env, no training): the same numbers.
    replayed = replay_into(path, [InfoMetrics(metrics.spec, window=20)]).metrics
    assert {key: replayed[key] for key in keys} == {key: runners[key] for key in keys}
    print("replayed:", {key: round(replayed[key], 3) for key in keys})


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        main(Path(folder))
