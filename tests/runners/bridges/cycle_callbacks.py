"""Callbacks logging one metric of every kind, for the replay-cycle tests of the bridges.

They import no framework (a recording's replay runs them anywhere) and live at module
level (Ray actors import them). Every value is one that a replay rebuilds exactly: RLlib
cuts an episode that spans two ``sample()`` calls into chunks, so ``len(episode)`` or its
return at ``on_episode_end`` is the last chunk's live and the whole episode's on replay;
the final observation is the same either way.
"""

from __future__ import annotations

from typing import Any

from hookbus.kernel import Callback

RUNNER_KEYS = (
    "c_steps",
    "c_steps_cleared",
    "c_steps_lifetime",
    "c_episodes_kept",
    "c_final_w50",
    "c_final_all",
    "c_final_w3",
    "c_final_mean",
    "c_final_ema",
    "c_final_ema_02",
    "c_final_max",
    "c_final_min_w5",
    "c_final_sum_w4",
    "c_final_p",
    "c_samples",
)
"""The keys ``EveryKind`` logs from an EnvRunner's hooks (RLlib: ``env_runners/<key>``)."""

DRIVER_KEYS = ("c_results", "c_results_lifetime", "c_iteration_w2")
"""The keys it logs from ``on_train_result`` (RLlib: top level, one iteration late)."""


def final_value(episode: Any) -> float:
    """The episode's last cart position, in mm: equal live and on replay, chunks or not."""
    return round(abs(float(episode.get_observations(-1)[0])) * 1000.0, 3)


class EveryKind(Callback):
    """Log sums (cleared or not), lifetime sums, windowed and plain means, EMAs, min, max,
    windowed sums and percentiles, from the runners' hooks and from the driver's."""

    def __init__(self) -> None:
        super().__init__()
        self.finals: list[float] = []  # every final value, in replay order

    def on_episode_step(self, *, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("c_steps", 1, reduce="sum")
        metrics_logger.log_value("c_steps_cleared", 1, reduce="sum", clear_on_reduce=True)
        metrics_logger.log_value("c_steps_lifetime", 1, reduce="lifetime_sum")

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        value = final_value(episode)
        self.finals.append(value)
        log = metrics_logger.log_value
        log("c_episodes_kept", 1, reduce="sum", clear_on_reduce=False)
        log("c_final_w50", value, reduce="mean", window=50)
        log("c_final_all", value, reduce="mean", window=100_000)
        log("c_final_w3", value, window=3)
        log("c_final_mean", value, reduce="mean")
        log("c_final_ema", value)
        log("c_final_ema_02", value, reduce="ema", ema_coeff=0.2)
        log("c_final_max", value, reduce="max")
        log("c_final_min_w5", value, reduce="min", window=5)
        log("c_final_sum_w4", value, reduce="sum", window=4)
        log("c_final_p", value, reduce="percentiles", window=20, percentiles=[0, 50, 100])

    def on_sample_end(self, *, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("c_samples", 1, reduce="sum")

    def on_train_result(self, *, metrics_logger: Any, result: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("c_results", 1, reduce="sum")
        metrics_logger.log_value("c_results_lifetime", 1, reduce="lifetime_sum")
        iteration = result["training_iteration"]
        metrics_logger.log_value("c_iteration_w2", iteration, reduce="mean", window=2)


class ChunkLengths(Callback):
    """The issue's case: ``len(episode)`` as a windowed mean (equal on replay when RLlib
    samples whole episodes, ``batch_mode="complete_episodes"``)."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("c_len_w50", len(episode), reduce="mean", window=50)


class EvaluationLogs(Callback):
    """Log from the driver's evaluation hooks (RLlib evaluates after its compile)."""

    def on_evaluate_start(self, *, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("c_evaluations", 1, reduce="sum")

    def on_evaluate_end(self, *, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("c_evaluations_lifetime", 1, reduce="lifetime_sum")


SB3_KEYS = (
    "c_steps",
    "c_steps_cleared",
    "c_steps_lifetime",
    "c_return_w5",
    "c_return_w50",
    "c_return_ema",
    "c_return_max",
    "c_episodes_cleared",
    "c_dumps_lifetime",
    "c_dumps_cleared",
)
"""The keys ``SB3Kinds`` logs (hookbus's own MetricsLogger, SB3's log at each dump)."""


class SB3Kinds(Callback):
    """Log sums (cleared each dump or not), lifetime sums, windowed means, an EMA and a max,
    from the env runner's hooks and from ``on_train_result`` (each log dump)."""

    def on_episode_step(self, *, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("c_steps", 1, reduce="sum")
        metrics_logger.log_value("c_steps_cleared", 1, reduce="sum", clear_on_reduce=True)
        metrics_logger.log_value("c_steps_lifetime", 1, reduce="lifetime_sum")

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        value = episode.get_return()
        log = metrics_logger.log_value
        log("c_return_w5", value, window=5)
        log("c_return_w50", value, reduce="mean", window=50)
        log("c_return_ema", value)
        log("c_return_max", value, reduce="max")
        log("c_episodes_cleared", 1, reduce="sum", clear_on_reduce=True)

    def on_train_result(self, *, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("c_dumps_lifetime", 1, reduce="lifetime_sum")
        metrics_logger.log_value("c_dumps_cleared", 1, reduce="sum", clear_on_reduce=True)
