"""Log metrics on two EnvRunners, merge them into the Algorithm's logger, print the results.

Run: ``python docs/examples/metrics_basic.py``. docs/metrics.md quotes this file.
"""

from __future__ import annotations

from typing import Any

from hookbus.metrics import MetricsLogger, Stats, results

# --- one logger, the RLlib basics -----------------------------------------------------------
logger = MetricsLogger()
logger.log_value("loss", 1.0)  # "mean" without a window: an EMA with coefficient 0.01
logger.log_value("loss", 2.0)
print("ema loss:", round(logger.peek("loss"), 4))

for value in (1, 2, 3, 4, 5):
    logger.log_value("last3", value, reduce="mean", window=3)
print("window-3 mean of 1..5:", logger.peek("last3"))

block = MetricsLogger()  # log_values: a block, exactly as one log_value per value
block.log_values("last3", [1, 2, 3, 4, 5], reduce="mean", window=3)
print("log_values, window-3 mean of 1..5:", block.peek("last3"))
assert block.peek("last3") == logger.peek("last3")

latency = Stats("percentiles", window=10)  # a Stats is one key's reduction, on its own
for value in range(1, 11):
    latency.push(value)
print("percentiles of 1..10:", {p: round(v, 2) for p, v in latency.peek().items()})

logger.log_value(("timers", "sample"), 0.25, reduce="max", window=10)
print("nested peek:", logger.peek("timers"))
print("missing key with default:", logger.peek("nope", default=-1))

# --- two EnvRunners and the Algorithm -------------------------------------------------------
runners = [MetricsLogger(), MetricsLogger()]
algorithm = MetricsLogger()


def sample(runner: MetricsLogger, returns: list[float]) -> dict[str, Any]:
    """Stand in for EnvRunner.sample(): log per-episode metrics, then reduce."""
    for episode_return in returns:
        runner.log_value("episode_return_mean", episode_return, reduce="mean", window=3)
        runner.log_value("num_episodes", 1, reduce="sum", clear_on_reduce=True)
        runner.log_value("num_episodes_lifetime", 1, reduce="lifetime_sum")
        runner.log_value(
            "num_env_steps_sampled_lifetime", 20, reduce="lifetime_sum", with_throughput=True
        )
    return runner.reduce()  # plain data: it could cross a process boundary


def train(episodes: list[list[float]]) -> dict[str, Any]:
    """Stand in for Algorithm.train(): merge the runners' snapshots, build the result."""
    snapshots = [sample(r, returns) for r, returns in zip(runners, episodes, strict=True)]
    algorithm.aggregate(snapshots, key="env_runners")
    result = results(algorithm)  # nested dicts of plain values
    algorithm.reduce()  # close the iteration: per-iteration sums clear, windows slide
    return result


for iteration, episodes in enumerate([[[100, 200, 300, 400], [150, 250, 350, 450]], [[], [500]]]):
    result = train(episodes)
    env_runners = result["env_runners"]
    rate = env_runners.pop("num_env_steps_sampled_lifetime_throughput")
    print(f"iteration {iteration + 1}:", env_runners)
    print("  steps per second is a float:", isinstance(rate, float))
