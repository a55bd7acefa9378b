"""Run hookbus callbacks inside Stable-Baselines3's PPO, then replay the run without SB3.

The bridge (``sb3_callback``) gives SB3 a ``BaseCallback`` that publishes RLlib's hooks:
an episode object per sub-env episode, ``on_sample_end`` per rollout, ``on_train_result``
at each log dump. What the handlers log lands in SB3's own logger (here its CSV file);
replaying the recording into the same callback gives the same value, with hookbus alone.
"""

from __future__ import annotations

import csv
import tempfile
from pathlib import Path
from typing import Any

import anyio
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.logger import configure

from hookbus.events import TrainResult
from hookbus.kernel import Callback, check_lifecycle, read_recording, replay_into
from hookbus.runners.bridges import sb3_callback


class PoleMoves(Callback):
    """How far the pole leans, per episode: a handler per step, one per episode end."""

    def on_episode_step(self, *, episode: Any, **kwargs: Any) -> None:
        angle = episode.get_observations(-1)[2]  # CartPole: the pole's angle (radians)
        episode.add_temporary_timestep_data("lean", abs(float(angle)))

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        leans = episode.get_temporary_timestep_data("lean")
        metrics_logger.log_value(("custom", "mean_lean"), sum(leans) / len(leans), window=20)
        metrics_logger.log_value(("custom", "return"), episode.get_return(), window=20)

    async def on_sample_end(self, *, event: Any, metrics_logger: Any, **kwargs: Any) -> None:
        await anyio.lowlevel.checkpoint()  # an async handler: awaited on the bridge's loop
        # The event's count, not the samples' lengths: a replay rebuilds whole episodes,
        # where SB3's run handed the chunks stepped in this rollout.
        metrics_logger.log_value(("custom", "steps"), event.num_env_steps, reduce="lifetime_sum")


def main() -> None:
    torch.set_num_threads(1)  # a tiny network: one thread is fastest, and kind to CI
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        model = PPO(
            "MlpPolicy",
            make_vec_env("CartPole-v1", n_envs=4, seed=0),
            n_steps=128,
            n_epochs=2,
            seed=0,
            device="cpu",
        )
        sb3_log = configure(str(folder), ["csv"])  # SB3's own logger: the CSV file only
        model.set_logger(sb3_log)
        bridge = sb3_callback(PoleMoves, record=folder / "run.msgpack")
        model.learn(2_048, callback=bridge)
        bridge.close()
        sb3_log.close()

        with open(folder / "progress.csv", newline="") as file:
            last = list(csv.DictReader(file))[-1]
        print(f"SB3 trained {model.num_timesteps} steps; its log's last line:")
        for key in ("rollout/ep_rew_mean", "custom/return", "custom/mean_lean", "custom/steps"):
            print(f"  {key:<20} {float(last[key]):.4f}")

        # The recording needs hookbus only: read it, check it, replay it up to the last
        # dump (the log line above) into the same callback.
        events = list(read_recording(folder / "run.msgpack"))
        summary = check_lifecycle(events)
        print(f"recording: {summary.events} events, {summary.episodes} episodes, ok")
        last_dump = max(i for i, event in enumerate(events) if isinstance(event, TrainResult))
        replayed = replay_into(events[: last_dump + 1], PoleMoves).metrics["custom"]
        for key in ("return", "mean_lean", "steps"):
            live = float(last[f"custom/{key}"])
            print(f"  custom/{key:<13} live {live:.4f}  replayed {replayed[key]:.4f}")
            assert abs(live - replayed[key]) <= 1e-6 * max(1.0, abs(live))


if __name__ == "__main__":
    main()
