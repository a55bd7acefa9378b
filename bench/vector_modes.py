"""Vectorize modes in one run: ASYNC against SYNC on a slow env, VECTOR_ENTRY_POINT on CartPole.

``gym_env_vectorize_mode="ASYNC"`` gives each sub-env its own process: worth it when an env
step costs more than the pipe round trip. The first table steps an env that sleeps 1 ms a
step with 1, 2 and 4 sub-envs in each mode; the second compares CartPole's own vector env
(``"VECTOR_ENTRY_POINT"``) with SYNC at 8 and 64 sub-envs (its speed is issue 31's; here it
is only printed). Every row is an EnvRunner sampling random actions with no callbacks,
measured in rounds that alternate the cases, and the best round of each case is kept (noise
on a shared machine only adds time). Throughput is env steps recorded per second.

Run: ``python bench/vector_modes.py [--quick]``.
"""

from __future__ import annotations

import argparse
import functools
import os
import time
from typing import Any

import anyio
import gymnasium as gym
import numpy as np

from hookbus.kernel import Bus
from hookbus.runners import EnvRunner, PPOConfig

SLEEP_S = 0.001


class SlowEnv(gym.Env[Any, Any]):
    """A 200-step episode whose every step sleeps 1 ms (a simulator's cost, not CPU)."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (4,), dtype=np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, config: Any = None) -> None:
        self.t = 0

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(4, dtype=np.float32), {}

    def step(self, action: int) -> Any:
        time.sleep(SLEEP_S)
        self.t += 1
        return np.full(4, 0.001 * self.t, dtype=np.float32), 1.0, False, self.t >= 200, {}


def make_runner(env: Any, mode: str, num_envs: int) -> EnvRunner:
    config = PPOConfig().environment(env).debugging(seed=0)
    config.env_runners(num_envs_per_env_runner=num_envs, gym_env_vectorize_mode=mode)
    return EnvRunner(config, bus=Bus())


def steps_per_s(runner: EnvRunner, steps: int) -> float:
    """Return env steps recorded per second of one ``sample(num_timesteps=steps)``."""
    sample = functools.partial(runner.sample, num_timesteps=steps, random_actions=True)
    start = time.perf_counter()
    chunks = anyio.run(sample)
    return sum(map(len, chunks)) / (time.perf_counter() - start)


def best_of_rounds(cases: dict[tuple[str, int], tuple[EnvRunner, int]], rounds: int) -> dict:
    """Measure every case once per round, the cases alternating; keep each one's best."""
    for runner, steps in cases.values():  # warm up: the first reset, specialised bytecode
        steps_per_s(runner, max(1, steps // 10))
    best = dict.fromkeys(cases, 0.0)
    for _ in range(rounds):
        for key, (runner, steps) in cases.items():
            best[key] = max(best[key], steps_per_s(runner, steps))
    return best


def run_table(
    title: str, env: Any, modes: tuple[str, str], sizes: list[int], steps: Any, rounds: int
) -> None:
    cases = {(mode, n): (make_runner(env, mode, n), steps(n)) for n in sizes for mode in modes}
    try:
        best = best_of_rounds(cases, rounds)
    finally:
        for runner, _ in cases.values():
            runner.stop()
    base, other = modes
    print(f"\n{title}")
    print(f"  {'sub-envs':>8}  {base + ' steps/s':>18}  {other + ' steps/s':>26}  {'ratio':>7}")
    for n in sizes:
        a, b = best[(base, n)], best[(other, n)]
        print(f"  {n:>8}  {a:>18,.0f}  {b:>26,.0f}  {b / a:>6.2f}x")


def main(quick: bool) -> None:
    rounds = 3 if quick else 5
    print(f"{os.cpu_count()} cores; best of {rounds} interleaved rounds; random actions")
    run_table(
        f"env sleeping {SLEEP_S * 1000:.0f} ms a step: ASYNC vs SYNC",
        SlowEnv,
        ("SYNC", "ASYNC"),
        [1, 2, 4],
        lambda n: (150 if quick else 400) * n,
        rounds,
    )
    run_table(
        "CartPole-v1: VECTOR_ENTRY_POINT (CartPoleVectorEnv) vs SYNC",
        "CartPole-v1",
        ("SYNC", "VECTOR_ENTRY_POINT"),
        [8, 64],
        lambda n: 10_000 if quick else 40_000,
        rounds,
    )


if __name__ == "__main__":  # ASYNC sub-env processes import this file again
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps and rounds")
    main(parser.parse_args().quick)
