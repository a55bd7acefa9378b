"""Env steps and wall time for PPO to reach a CartPole-v1 episode_return_mean of 450.

Trains through the public API (PPOConfig().build().train()), as a user would, with the
default settings and 3 seeds. Run: ``python bench/learning.py [--seeds 0 1 2]``.
"""

from __future__ import annotations

import argparse
import time

from hookbus.runners import PPOConfig


def run(seed: int, target: float, max_steps: int) -> tuple[bool, int, float, float]:
    """Train until the target or the step budget; return (reached, steps, seconds, best)."""
    config = PPOConfig().environment("CartPole-v1").debugging(seed=seed)
    start = time.perf_counter()
    best = float("-inf")
    with config.build() as algo:
        while True:
            result = algo.train()
            steps = result["num_env_steps_sampled_lifetime"]
            ret = result["env_runners"]["episode_return_mean"]
            best = max(best, ret)
            print(
                f"  seed {seed}  iter {result['training_iteration']:3d}  steps {steps:7d}  "
                f"return_mean {ret:6.1f}",
                flush=True,
            )
            if ret >= target or steps >= max_steps:
                return ret >= target, steps, time.perf_counter() - start, best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--target", type=float, default=450.0)
    parser.add_argument("--max-steps", type=int, default=300_000)
    args = parser.parse_args()
    rows = [(seed, *run(seed, args.target, args.max_steps)) for seed in args.seeds]
    print(
        f"\nPPO on CartPole-v1, target episode_return_mean >= {args.target:g} "
        f"within {args.max_steps} env steps:"
    )
    for seed, reached, steps, seconds, best in rows:
        verdict = "reached" if reached else f"MISSED (best {best:.1f})"
        print(f"  seed {seed}: {verdict} after {steps} env steps, {seconds:.1f} s")


if __name__ == "__main__":
    main()
