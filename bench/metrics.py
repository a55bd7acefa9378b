"""Cost of MetricsLogger's hot path, peek, and reduce()+aggregate(), against a plain-list floor.

The floor is what a hand-written metric would cost: appending to a Python list on each log,
and ``statistics.fmean`` of its last 50 values on each peek. Every figure is best-of-N
(noise only adds time). Run: ``python bench/metrics.py [--quick]``.

For scale: RLlib 2.60's ``MetricsLogger.log_value`` costs 2-10 us per call on this machine
(measured for the issue; RLlib's own lock was up to 10% of learner time). The targets here:
under 1 us per ``log_value`` on an existing key for every reduce kind, and under 200 us for
``reduce()`` on 8 runners plus ``aggregate()`` of their snapshots, 20 keys each.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _timing import best_ns, ratio_table

from hookbus.metrics import MetricsLogger

# The 20 keys an EnvRunner typically holds: the built-in episode metrics plus custom ones.
KEYS: list[tuple[str, dict[str, Any]]] = [
    ("episode_return_mean", {"reduce": "mean", "window": 100}),
    ("episode_return_min", {"reduce": "min", "window": 100}),
    ("episode_return_max", {"reduce": "max", "window": 100}),
    ("episode_len_mean", {"reduce": "mean", "window": 100}),
    ("num_episodes", {"reduce": "sum", "clear_on_reduce": True}),
    ("num_env_steps_sampled", {"reduce": "sum", "clear_on_reduce": True}),
    ("num_env_steps_sampled_lifetime", {"reduce": "lifetime_sum", "with_throughput": True}),
    ("num_episodes_lifetime", {"reduce": "lifetime_sum"}),
    ("sample_time", {"reduce": "ema"}),
    ("theta1_mean", {"reduce": "mean", "window": 50}),
    ("custom_window_mean", {"reduce": "mean", "window": 50}),
    ("custom_ema", {"reduce": "mean"}),
    ("custom_max", {"reduce": "max"}),
    ("custom_min", {"reduce": "min"}),
    ("custom_sum", {"reduce": "sum"}),
    ("custom_item", {"reduce": "item"}),
    ("custom_window_20", {"reduce": "mean", "window": 20}),
    ("custom_ema_01", {"reduce": "ema", "ema_coeff": 0.1}),
    ("custom_max_10", {"reduce": "max", "window": 10}),
    ("custom_count", {"reduce": "sum", "clear_on_reduce": True}),
]


# --- log_value and peek ---------------------------------------------------------------------


def log_loop(call: str) -> Callable[[int], None]:
    """Return a loop running ``call`` (source text calling ``log``) on an existing key.

    The call is compiled as written, keyword arguments spelled out as in a callback: a
    ``**settings`` in the loop would add the cost of building a dict to every call.
    """
    logger = MetricsLogger()
    namespace: dict[str, Any] = {}
    exec(f"def loop(n, log):\n    for _ in range(n):\n        {call}\n", namespace)
    loop: Callable[[int, Any], None] = namespace["loop"]
    loop(1, logger.log_value)  # the first log creates the key
    return lambda n: loop(n, logger.log_value)


def new_key_loop(n: int) -> None:
    """Log each value under a key never seen before: validation and allocation included."""
    logger = MetricsLogger()
    log = logger.log_value
    for key in NEW_KEYS[:n]:
        log(key, 1.0, reduce="mean", window=50)


NEW_KEYS = [f"key_{i}" for i in range(200_000)]


def peek_loop(n: int) -> None:
    logger = MetricsLogger()
    for value in range(50):
        logger.log_value("theta1_mean", float(value), reduce="mean", window=50)
    peek = logger.peek
    for _ in range(n):
        peek("theta1_mean")


def floor_call_loop(n: int) -> None:
    """A plain function with log_value's call shape: a dict lookup and a list append."""
    lists: dict[str, list[float]] = {"theta1_mean": []}

    def log(key: str, value: float, reduce: str = "mean", window: int | None = None) -> None:
        lists[key].append(value)

    for _ in range(n):
        log("theta1_mean", 0.5, reduce="mean", window=50)


def floor_append_loop(n: int) -> None:
    values: list[float] = []
    append = values.append
    for _ in range(n):
        append(1.5)


def floor_peek_loop(n: int) -> None:
    values = [float(v) for v in range(1000)]
    fmean = statistics.fmean
    for _ in range(n):
        fmean(values[-50:])


# --- reduce() + aggregate() -----------------------------------------------------------------


def fill(runners: list[MetricsLogger], per_key: int, rng: random.Random) -> None:
    """Log ``per_key`` values per key on every runner (one iteration's worth; not timed)."""
    for runner in runners:
        for key, settings in KEYS:
            for _ in range(per_key):
                runner.log_value(key, rng.random(), **settings)


def reduce_aggregate_us(per_key: int, rounds: int) -> tuple[float, float]:
    """Return the best and median us of 8 runners' reduce() plus one aggregate()."""
    rng = random.Random(0)
    runners = [MetricsLogger() for _ in range(8)]
    algorithm = MetricsLogger()
    times = []
    for _ in range(rounds):
        fill(runners, per_key, rng)
        start = time.perf_counter_ns()
        snapshots = [runner.reduce() for runner in runners]
        algorithm.aggregate(snapshots, key="env_runners")
        times.append((time.perf_counter_ns() - start) / 1000)
        algorithm.reduce()
    return min(times), statistics.median(times)


def floor_reduce_us(rounds: int) -> float:
    """The floor: fmean of the last 50 of 8 x 20 plain lists, then 20 means of 8 means."""
    lists = [[[float(v) for v in range(60)] for _ in KEYS] for _ in range(8)]
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter_ns()
        per_runner = [[statistics.fmean(values[-50:]) for values in keys] for keys in lists]
        [statistics.fmean(column) for column in zip(*per_runner, strict=True)]
        best = min(best, (time.perf_counter_ns() - start) / 1000)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    n = 20_000 if parser.parse_args().quick else 200_000
    rounds = 50 if n < 100_000 else 400

    floor_append = best_ns(floor_append_loop, n)
    floor_call = best_ns(floor_call_loop, n)
    floor_peek = best_ns(floor_peek_loop, n // 10)
    cases = [
        ("mean, window 50", 'log("theta1_mean", 0.5, reduce="mean", window=50)'),
        ("ema (mean, no window)", 'log("loss", 0.5)'),
        ("ema, coefficient 0.1", 'log("loss", 0.5, reduce="ema", ema_coeff=0.1)'),
        ("sum", 'log("num_episodes", 1, reduce="sum", clear_on_reduce=True)'),
        ("lifetime_sum", 'log("steps_lifetime", 1, reduce="lifetime_sum")'),
        (
            "lifetime_sum + throughput",
            'log("steps_lifetime", 1, reduce="lifetime_sum", with_throughput=True)',
        ),
        ("min, no window", 'log("low", 0.5, reduce="min")'),
        ("max, window 100", 'log("episode_return_max", 0.5, reduce="max", window=100)'),
        ("item", 'log("lr", 0.5, reduce="item")'),
        ("item_series, window 50", 'log("actions", 1, reduce=None, window=50)'),
        ("percentiles, window 50", 'log("lat", 0.5, reduce="percentiles", window=50)'),
        ("3-level key, mean, window 50", 'log(("a", "b", "c"), 0.5, reduce="mean", window=50)'),
    ]
    log_rows = [
        (f"log_value existing key: {name}", best_ns(log_loop(call), n)) for name, call in cases
    ]
    log_rows += [
        ("log_value new key (validation + allocation)", best_ns(new_key_loop, min(n, 50_000), 3)),
        ("floor: list.append", floor_append),
        ("floor: def log(key, value, reduce=, window=) -> list.append", floor_call),
    ]
    print(f"log_value (n={n}, best of 7)")
    print(ratio_table(log_rows, {"append": floor_append, "call": floor_call}))
    print()
    peek_rows = [
        ("peek: mean, window 50", best_ns(peek_loop, n // 10)),
        ("floor: fmean(last 50)", floor_peek),
    ]
    print(ratio_table(peek_rows, {"fmean": floor_peek}))
    print()
    print(f"reduce() on 8 runners + aggregate() of their snapshots, 20 keys each ({rounds} rounds)")
    floor = floor_reduce_us(rounds)
    for per_key in (1, 5, 50):
        best, median = reduce_aggregate_us(per_key, rounds)
        print(
            f"  {per_key:>2} new values per key per runner: best {best:7.1f} us, "
            f"median {median:7.1f} us  ({best / floor:.2f}x the floor)"
        )
    print(f"  floor (fmean of last 50 of 8 x 20 lists, then 20 means): {floor:7.1f} us")


if __name__ == "__main__":
    main()
