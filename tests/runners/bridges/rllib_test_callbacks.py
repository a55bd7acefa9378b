"""Callbacks for the RLlib bridge's result, argument, stop and gap tests (module-level: Ray
actors import them)."""

from __future__ import annotations

import os
import signal
import time
from typing import Any, ClassVar

from ray.rllib.callbacks.callbacks import RLlibCallback

from hookbus.kernel import Callback, Control


class AddsToResult(RLlibCallback):
    """An RLlib callback that adds a key to the result, as RLlib's curriculum example does."""

    def on_train_result(self, *, result: dict[str, Any], **kwargs: Any) -> None:
        result["rllib_added"] = result["training_iteration"] * 10


class ResultKey(Callback):
    """A hookbus handler that adds a key to the result."""

    def on_train_result(self, *, event: Any, result: dict[str, Any], **kwargs: Any) -> None:
        result["hb_added"] = event.training_iteration


class ScaledEnds(RLlibCallback):
    """An RLlib callback with a constructor argument, as RLlib's SelfPlayCallback has."""

    def __init__(self, scale: float) -> None:
        super().__init__()
        self.scale = scale

    def on_episode_end(self, *, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("scaled_ends", self.scale, reduce="sum")


class ScaledSteps(Callback):
    """A hookbus Callback with a constructor argument."""

    def __init__(self, scale: float) -> None:
        super().__init__()
        self.scale = scale

    def on_episode_step(self, *, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("scaled_steps", self.scale, reduce="sum")


def make_scaled_ends() -> ScaledEnds:
    """A factory, as RLlib accepts any callable returning a callback."""
    return ScaledEnds(scale=3.0)


class StopFrom(Callback):
    """Ask to stop training at the result of iteration ``at`` and after."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.at = at

    def on_train_result(self, *, event: Any, **kwargs: Any) -> Control | None:
        if event.training_iteration >= self.at:
            return Control(stop_training=True, reason="enough")
        return None


class StopOnFirstEnd(Callback):
    """Ask to stop training from an EnvRunner, at its first episode end."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = False

    def on_episode_end(self, **kwargs: Any) -> Control | None:
        if self.asked:
            return None
        self.asked = True
        return Control(stop_training=True)


class KillsRunner(RLlibCallback):
    """Kill remote EnvRunner ``VICTIM``'s process at iteration ``AT``'s ``on_train_result``.

    Given to ``config.callbacks([KillsRunner, bridge])`` before the bridge: RLlib calls it
    first, so the runner has sampled that iteration and dies before the bridge takes its
    events. The pids are read at ``on_algorithm_init`` (on the driver).
    """

    VICTIM: ClassVar[int] = 2
    AT: ClassVar[int] = 2

    def on_algorithm_init(self, *, algorithm: Any, **kwargs: Any) -> None:
        pids = algorithm.env_runner_group.foreach_env_runner(_index_and_pid, local_env_runner=False)
        self.pids = dict(pids)

    def on_train_result(self, *, result: dict[str, Any], **kwargs: Any) -> None:
        if result["training_iteration"] == self.AT:
            pid = self.pids[self.VICTIM]
            os.kill(pid, signal.SIGKILL)
            _wait_dead(pid)


def _wait_dead(pid: int) -> None:
    """Return once ``pid`` is gone or a zombie (its parent, Ray's raylet, reaps it)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rpartition(")")[2].split()[0] == "Z":
                    return
        except FileNotFoundError:
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} still runs 30 s after SIGKILL")


def _index_and_pid(env_runner: Any) -> tuple[int, int]:
    return env_runner.worker_index, os.getpid()
