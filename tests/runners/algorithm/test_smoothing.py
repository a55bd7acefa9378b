"""The episode smoothing window, split over the runners as RLlib splits it."""

from __future__ import annotations

from typing import Any

import pytest

from hookbus.kernel import Callback, ConfigError
from hookbus.metrics import MetricsLogger
from hookbus.runners import EnvRunnerMetrics, PPOConfig


class ReturnsByRunner(Callback):
    def __init__(self) -> None:
        super().__init__()
        self.returns: dict[int, list[float]] = {}

    def on_episode_end(self, *, episode: Any, env_runner: Any, **kwargs: Any) -> None:
        self.returns.setdefault(env_runner.worker_index, []).append(episode.get_return())


def merged_mean(returns: dict[int, list[float]], window: int) -> float:
    """Return what RLlib's runners (``window`` each) and merge make of ``returns``."""
    snapshots = []
    for _, values in sorted(returns.items()):
        runner = MetricsLogger()
        for value in values:
            runner.log_value("episode_return_mean", value, reduce="mean", window=window)
        snapshots.append(runner.reduce())
    algorithm = MetricsLogger()
    algorithm.aggregate(snapshots, key="env_runners")
    mean: float = algorithm.peek(("env_runners", "episode_return_mean"))
    return mean


def test_each_runner_smooths_over_its_share_of_the_window() -> None:
    # RLlib's runners log ceil(metrics_num_episodes_for_smoothing / num_env_runners)
    # episodes each (single_agent_env_runner.py, _log_episode_metrics): 4 / 2 = 2 here.
    recorder = ReturnsByRunner()
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_env_runners=2, metrics_num_episodes_for_smoothing=4)
        .training(train_batch_size=400, minibatch_size=100, num_epochs=1)
        .callbacks(recorder)
        .debugging(seed=0)
    )
    with config.build() as algo:
        result = algo.train()
    returns = recorder.returns
    assert sorted(returns) == [1, 2]
    assert min(len(values) for values in returns.values()) > 4  # the windows are full
    got = result["env_runners"]["episode_return_mean"]
    assert got == pytest.approx(merged_mean(returns, window=2))
    assert got != pytest.approx(merged_mean(returns, window=4))  # the test can tell them apart


def test_a_single_runner_keeps_the_whole_window() -> None:
    recorder = ReturnsByRunner()
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(metrics_num_episodes_for_smoothing=3)
        .training(train_batch_size=200, minibatch_size=100, num_epochs=1)
        .callbacks(recorder)
        .debugging(seed=0)
    )
    with config.build() as algo:
        result = algo.train()
    (values,) = recorder.returns.values()
    assert result["env_runners"]["episode_return_mean"] == pytest.approx(sum(values[-3:]) / 3)


@pytest.mark.parametrize("window", [0, -1, 2.5, True, "3"])
def test_a_bad_window_is_refused(window: Any) -> None:
    with pytest.raises(ConfigError, match="window must be None or an int >= 1"):
        EnvRunnerMetrics(window=window)
