"""The built-in EnvRunner metrics keep each logger's ended episodes until its sample ends."""

from __future__ import annotations

import copy
import gc
import pickle
import weakref

from hookbus.events import SampleEnd
from hookbus.metrics import MetricsLogger
from hookbus.runners import EnvRunnerMetrics, Episode


def episode(rewards: list[float]) -> Episode:
    n = len(rewards)
    return Episode.from_steps(
        observations=[0.0] * (n + 1), actions=[0] * n, rewards=rewards, infos=[{}] * (n + 1)
    )


def end(metrics: EnvRunnerMetrics, logger: MetricsLogger, *rewards: list[float]) -> None:
    for r in rewards:
        metrics.on_episode_end(episode=episode(r), env_runner=None, metrics_logger=logger)


def sample_end(metrics: EnvRunnerMetrics, logger: MetricsLogger, steps: int = 10) -> None:
    event = SampleEnd(source="env_runner:0", seq=0, num_env_steps=steps)
    metrics.on_sample_end(event=event, metrics_logger=logger, samples=[])


def test_each_logger_gets_the_episodes_that_ended_on_it() -> None:
    metrics, a, b = EnvRunnerMetrics(window=10), MetricsLogger(), MetricsLogger()
    end(metrics, a, [1.0, 1.0])
    end(metrics, b, [5.0])
    end(metrics, a, [4.0])  # back to a: its earlier episode is still there
    assert a.peek("episode_return_mean", default=None) is None  # logged at the sample's end
    sample_end(metrics, a)
    sample_end(metrics, b)
    assert a.peek("episode_return_mean") == 3.0
    assert a.peek("episode_len_max") == 2
    assert a.peek("num_episodes") == 2
    assert b.peek("episode_return_mean") == 5.0
    assert b.peek("num_episodes") == 1
    sample_end(metrics, a)  # nothing ended since: counted as 0, the window kept
    assert a.peek("num_episodes") == 2  # a sum until the logger is reduced
    assert a.peek("episode_return_mean") == 3.0


def test_a_logger_whose_sample_never_ended_is_not_kept_alive() -> None:
    # An in-process runner that fails in the middle of a sample() never reaches its
    # on_sample_end; the callback outlives it and must not hold its logger.
    metrics, logger = EnvRunnerMetrics(window=10), MetricsLogger()
    end(metrics, logger, [1.0])
    gone = weakref.ref(logger)
    del logger
    gc.collect()
    assert gone() is None
    other = MetricsLogger()  # and the callback goes on with other loggers
    end(metrics, other, [2.0])
    sample_end(metrics, other)
    assert other.peek("episode_return_mean") == 2.0
    assert other.peek("num_episodes") == 1


def test_a_copy_starts_with_nothing_pending() -> None:
    metrics, logger = EnvRunnerMetrics(window=7), MetricsLogger()
    end(metrics, logger, [1.0])
    for twin in (copy.deepcopy(metrics), pickle.loads(pickle.dumps(metrics))):
        assert twin.window == 7
        sample_end(twin, logger)
        assert logger.peek("num_episodes") == 0
        assert logger.peek("episode_return_mean", default=None) is None
    sample_end(metrics, logger)  # the original still has its episode
    assert logger.peek("num_episodes") == 1
    assert logger.peek("episode_return_mean") == 1.0
