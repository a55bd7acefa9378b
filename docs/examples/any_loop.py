"""A training loop of one's own, CleanRL-style, whose episodes hookbus callbacks see.

Run: ``python docs/examples/any_loop.py``. docs/any_loop.md quotes this file.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from hookbus.kernel import Callback, replay_into
from hookbus.runners import InfoMetrics
from hookbus.runners.bridges import wrap_env


class CartPoleWithInfo(gym.Wrapper):  # type: ignore[type-arg]
    """CartPole whose infos say where the cart is, and whether it is right of the centre."""

    def __init__(self) -> None:
        super().__init__(gym.make("CartPole-v1"))

    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = self.env.step(action)
        info = {**info, "x_position": float(obs[0]), "is_success": bool(obs[0] > 0.0)}
        return obs, reward, terminated, truncated, info


class Returns(Callback):
    """Each episode's return, as a mean over the last 20."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("ret_mean", episode.get_return(), window=20)


def callbacks() -> list[Callback]:
    return [Returns(), InfoMetrics({"x_position": "max", "is_success": "mean"}, window=20)]


def main(folder: Path) -> None:
    envs = gym.vector.SyncVectorEnv(
        [CartPoleWithInfo] * 4, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
    envs = wrap_env(envs, *callbacks(), record=folder / "run.msgpack")  # the one line added

    rng = np.random.default_rng(0)  # stands in for the policy
    envs.reset(seed=0)
    for iteration in range(3):
        for _ in range(100):
            envs.step(rng.integers(0, 2, 4))  # a loop of yours reads what it returns
        out = envs.reduce_metrics()  # what the callbacks logged: print it, or log it
        print(iteration, {key: round(value, 3) for key, value in out.items()})
    envs.close()  # closes the env and finishes the recording

    # The same callbacks, fed from the recording (no env): the same windowed numbers.
    replayed = replay_into(folder / "run.msgpack", callbacks()).metrics
    assert replayed == out
    print("replayed:", {key: round(value, 3) for key, value in replayed.items()})


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        main(Path(folder))
