"""Ray Tune's overhead: a 4-trial sweep against the same trials one after another.

Both sides train the same four PPO configs (a grid over lr, CartPole, ``--iterations``
iterations each, inline runners):

- **sequential**: in this process, ``config.build()``, ``train()`` N times, ``stop()``, one
  trial after the other: the baseline.
- **tune**: ``tune.Tuner(PPO, param_space=config)`` on a local Ray of ``--cpus`` CPUs, each
  trial an actor of 1 CPU (so up to ``--cpus`` trials at once).

Printed: both wall times and their ratio (tune / sequential; below 1 means Tune's
parallelism paid for its actors, checkpoints and bookkeeping), measured in the same run.
Ray's own start (``ray.init``) is timed apart and left out of both. Needs
``pip install "hookbus[tune]"``. Run: ``python bench/tune.py [--iterations N] [--cpus N]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import ray
from ray import tune

from hookbus.runners import PPO, PPOConfig

LRS = [1e-3, 5e-4, 3e-4, 1e-4]


def base_config() -> PPOConfig:
    return (
        PPOConfig()
        .environment("CartPole-v1")
        .training(train_batch_size=1000, minibatch_size=250, num_epochs=4)
        .debugging(seed=0)
    )


def sequential(iterations: int) -> tuple[float, list[float]]:
    start = time.perf_counter()
    returns = []
    for lr in LRS:
        with base_config().training(lr=lr).build() as algo:
            for _ in range(iterations):
                result = algo.train()
        returns.append(result["env_runners"]["episode_return_mean"])
    return time.perf_counter() - start, returns


def swept(iterations: int) -> tuple[float, list[float]]:
    config = base_config().training(lr=tune.grid_search(LRS))
    tuner = tune.Tuner(
        PPO,
        param_space=config,
        run_config=tune.RunConfig(
            storage_path=tempfile.mkdtemp(prefix="hookbus-bench-tune-"),
            stop={"training_iteration": iterations},
            verbose=0,
        ),
    )
    start = time.perf_counter()
    results = tuner.fit()
    elapsed = time.perf_counter() - start
    if results.num_errors:
        raise SystemExit(f"tune: {results.num_errors} trials failed: {results.errors}")
    by_lr = {
        r.config["training"]["lr"]: r.metrics["env_runners"]["episode_return_mean"] for r in results
    }
    return elapsed, [by_lr[lr] for lr in LRS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--cpus", type=int, default=2)
    args = parser.parse_args()
    started = time.perf_counter()
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    ray_start = time.perf_counter() - started
    seq_time, seq_returns = sequential(args.iterations)
    tune_time, tune_returns = swept(args.iterations)
    ray.shutdown()
    print(f"4 PPO trials x {args.iterations} iterations (train_batch_size 1000), {args.cpus} CPUs")
    print(f"ray.init (left out):          {ray_start:6.2f} s")
    print(f"sequential, one process:      {seq_time:6.2f} s  returns {fmt(seq_returns)}")
    print(f"tune.Tuner(PPO, grid of 4):   {tune_time:6.2f} s  returns {fmt(tune_returns)}")
    print(f"ratio tune / sequential:      {tune_time / seq_time:6.2f}")


def fmt(values: list[float]) -> str:
    return "[" + ", ".join(f"{v:.1f}" for v in values) + "]"


if __name__ == "__main__":
    main()
