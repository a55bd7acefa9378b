"""A callback written for RLlib runs, and its numbers replayed from a recording of one.

``PoleMoves`` runs inside RLlib through the bridge (``bridge_rllib.py``); this module needs
neither RLlib nor torch nor Ray: run it to replay ``rllib_cartpole.msgpack`` (a recording
of an RLlib PPO run, made by ``bridge_rllib.py --record``) into it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio.lowlevel

from hookbus.kernel import Callback, replay_into

RECORDING = Path(__file__).with_name("rllib_cartpole.msgpack")


class PoleMoves(Callback):
    """A hookbus callback: the steps where the pole's angle grew, per episode.

    ``event`` is hookbus's typed record of the step; ``episode`` and ``metrics_logger`` are
    RLlib's own objects, as an RLlibCallback gets them.
    """

    def on_episode_start(self, *, episode: Any, **kwargs: Any) -> None:
        episode.custom_data["tilting"] = 0

    def on_episode_step(self, *, event: Any, episode: Any, **kwargs: Any) -> None:
        angle = abs(float(event.observation[2]))
        if angle > episode.custom_data.get("angle", 0.0):
            episode.custom_data["tilting"] += 1
        episode.custom_data["angle"] = angle

    async def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        await anyio.lowlevel.checkpoint()  # an async handler: awaited before RLlib goes on
        metrics_logger.log_value("tilting_steps", episode.custom_data["tilting"], reduce="sum")


def main() -> None:
    for attempt in ("first (loads hookbus's episode rules)", "second"):
        start = time.perf_counter()
        replayed = replay_into(RECORDING, [PoleMoves()])
        took = time.perf_counter() - start
        print(f"{attempt}: {replayed.events} events replayed in {took * 1000:.0f} ms")
    # Per iteration, as RLlib's train() reported it (the recording's TrainResult events).
    print("tilting_steps:", [it["env_runners"]["tilting_steps"] for it in replayed.iterations])


if __name__ == "__main__":
    main()
