"""Env steps and wall time for PPO or DQN to reach a CartPole-v1 episode_return_mean of 450.

Trains through the public API (``PPOConfig().build().train()``, or DQN's), as a user would,
with the default settings and 3 seeds, for at most 300k env steps. Besides the target it
reports the first crossing of 400 and the best mean return reached. Run:
``python bench/learning.py [--algo PPO|DQN] [--seeds 0 1 2]``.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field
from typing import Any

from hookbus.runners import PPOConfig

ALGOS = ("PPO", "DQN")


@dataclass
class Run:
    """What one seed's run reached."""

    seed: int
    reached: bool = False
    steps: int = 0
    seconds: float = 0.0
    best: float = float("-inf")
    crossings: dict[float, tuple[int, float]] = field(default_factory=dict)
    curve: list[tuple[int, float]] = field(default_factory=list)


def make_config(algo: str, seed: int) -> Any:
    """Return the algorithm's default config on CartPole-v1 with ``seed``."""
    if algo == "DQN":
        # Not exported from hookbus.runners yet.
        from hookbus.runners import DQNConfig

        return DQNConfig().environment("CartPole-v1").debugging(seed=seed)
    return PPOConfig().environment("CartPole-v1").debugging(seed=seed)


def run(
    algo: str, seed: int, target: float, max_steps: int, print_every: int, marks: tuple[float, ...]
) -> Run:
    """Train until the target or the step budget; return what the run reached."""
    config = make_config(algo, seed)
    out = Run(seed)
    start = time.perf_counter()
    with config.build() as trainer:
        while True:
            result = trainer.train()
            steps = result["num_env_steps_sampled_lifetime"]
            ret = result["env_runners"]["episode_return_mean"]
            elapsed = time.perf_counter() - start
            out.best = max(out.best, ret)
            out.curve.append((steps, ret))
            for mark in marks:
                if ret >= mark and mark not in out.crossings:
                    out.crossings[mark] = (steps, elapsed)
            done = ret >= target or steps >= max_steps
            iteration = result["training_iteration"]
            if done or iteration % print_every == 0:
                print(
                    f"  seed {seed}  iter {iteration:3d}  steps {steps:7d}  "
                    f"return_mean {ret:6.1f}  {elapsed:6.1f} s",
                    flush=True,
                )
            if done:
                out.reached, out.steps, out.seconds = ret >= target, steps, elapsed
                return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algo", choices=ALGOS, default="PPO", type=str.upper)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--target", type=float, default=450.0)
    parser.add_argument("--max-steps", type=int, default=300_000)
    parser.add_argument(
        "--print-every",
        type=int,
        default=None,
        help="print every N iterations (default: 1 for PPO, 10 for DQN's 1000-step ones)",
    )
    args = parser.parse_args()
    print_every = args.print_every or (10 if args.algo == "DQN" else 1)
    marks = (400.0, args.target)
    runs = [
        run(args.algo, seed, args.target, args.max_steps, print_every, marks) for seed in args.seeds
    ]
    print(
        f"\n{args.algo} on CartPole-v1, target episode_return_mean >= {args.target:g} "
        f"within {args.max_steps} env steps:"
    )
    for r in runs:
        verdict = "reached" if r.reached else f"MISSED (best {r.best:.1f})"
        first = ", ".join(
            f">= {mark:g} at {steps} steps / {seconds:.1f} s"
            for mark, (steps, seconds) in sorted(r.crossings.items())
        )
        print(
            f"  seed {r.seed}: {verdict} after {r.steps} env steps, {r.seconds:.1f} s"
            + (f"  (first {first})" if first else "")
        )
    print("\ncurve (env steps: episode_return_mean), every ~10% of the longest run:")
    longest = max(len(r.curve) for r in runs)
    stride = max(1, longest // 10)
    for r in runs:
        points = r.curve[stride - 1 :: stride]
        if r.curve and (not points or points[-1] != r.curve[-1]):
            points.append(r.curve[-1])
        print(f"  seed {r.seed}: " + ", ".join(f"{s // 1000}k: {v:.0f}" for s, v in points))


if __name__ == "__main__":
    main()
