"""Write DQN's replay buffer to disk from ``on_train_result`` every second iteration.

The seeds' first callback example, in hookbus' API: ``algorithm.local_replay_buffer.
get_state()`` is a dict of numpy arrays and ints that ``codec.encode_msgpack`` writes as it
is. The files go to a temporary directory; decoding one gives the same arrays back.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from hookbus.events import codec
from hookbus.kernel import Callback
from hookbus.runners import DQNConfig


class SaveBuffer(Callback):
    """Save the replay buffer's state after every second training iteration."""

    def on_train_result(
        self, *, algorithm: Any, metrics_logger: Any, result: Any, **kwargs: Any
    ) -> None:
        if algorithm.training_iteration % 2 == 0:
            state = algorithm.local_replay_buffer.get_state()
            Path(f"buffer_{algorithm.training_iteration}.msgpack").write_bytes(
                codec.encode_msgpack(state)
            )


if __name__ == "__main__":
    config = DQNConfig().environment("CartPole-v1").callbacks(SaveBuffer).debugging(seed=0)
    home = Path.cwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # the callback writes relative paths, as in the seeds' example
        with config.build() as algo:
            for _ in range(4):
                result = algo.train()
            print(
                f"{result['training_iteration']} iterations, "
                f"{result['num_env_steps_sampled_lifetime']} env steps, "
                f"return {result['env_runners']['episode_return_mean']:.1f}, "
                f"{len(algo.local_replay_buffer)} transitions in the buffer"
            )
        for path in sorted(Path(tmp).glob("buffer_*.msgpack")):
            state = codec.decode_msgpack(path.read_bytes())
            columns = ", ".join(
                f"{name} {array.dtype}{list(array.shape)}"
                for name, array in state["columns"].items()
            )
            print(f"{path.name}: {path.stat().st_size} bytes, {state['size']} rows: {columns}")
        os.chdir(home)  # leave the directory before it is removed
