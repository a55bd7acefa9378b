"""Sampling at a vector env's speed: 64 CartPoles through the vector entry point (issue 31).

The floor is gymnasium's own ``CartPoleVectorEnv`` (``gym.make_vec("CartPole-v1",
num_envs=64, vectorization_mode="vector_entry_point")``) stepping random actions, nothing
recorded. Against it, one EnvRunner with ``gym_env_vectorize_mode="VECTOR_ENTRY_POINT"``
samples: random actions with no callbacks; the PPO policy (numpy); random actions with an
``on_episode_end`` callback logging a metric; random actions with an ``on_episode_step``
subscriber (which switches the runner to its per-step loop), whose cost is printed per
step. Throughput counts sub-env steps per second for every row (the transitions, plus the
autoreset step each finished episode costs its sub-env), so the floor and hookbus do the
same work. Time is the process's CPU time (``time.process_time``): every case runs in this
one process (the env included), and on a shared machine wall time mostly measures the
neighbours. Each round measures every case once, the cases alternating; each case keeps its
best round (noise only ever adds time).

Run: ``python bench/vector_sampling.py [--quick]``.
"""

from __future__ import annotations

import argparse
import functools
import os
import time
from collections.abc import Callable
from typing import Any

import anyio
import gymnasium as gym

from hookbus.kernel import Callback
from hookbus.runners import PPOConfig

NUM_ENVS = 64


class EndMetric(Callback):
    """Log one windowed metric per episode: the cheapest useful episode callback."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("end_return", episode.get_return(), reduce="mean", window=50)


class StepCount(Callback):
    """Count steps per episode in ``custom_data``: any per-step subscriber will do."""

    def on_episode_step(self, *, episode: Any, **kwargs: Any) -> None:
        episode.custom_data["steps"] = episode.custom_data.get("steps", 0) + 1


def raw_rate(steps: int) -> float:
    """Return sub-env steps per second of the bare vector env, random actions."""
    env = gym.make_vec("CartPole-v1", num_envs=NUM_ENVS, vectorization_mode="vector_entry_point")
    env.reset(seed=0)
    env.action_space.seed(0)
    sample, step = env.action_space.sample, env.step
    vector_steps = steps // NUM_ENVS
    start = time.process_time()
    for _ in range(vector_steps):
        step(sample())
    elapsed = time.process_time() - start
    env.close()
    return vector_steps * NUM_ENVS / elapsed


def make_sampler(callbacks: Any, *, random_actions: bool) -> tuple[Any, Callable[[int], float]]:
    """Return an Algorithm (to stop) and a function sampling ``n`` steps, giving steps/s."""
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_envs_per_env_runner=NUM_ENVS, gym_env_vectorize_mode="VECTOR_ENTRY_POINT")
        .debugging(seed=0)
    )
    if callbacks is not None:
        config.callbacks(callbacks)
    algo = config.build()
    runner = algo.env_runner

    def rate(steps: int) -> float:
        sample = functools.partial(
            runner.asample, num_timesteps=steps, random_actions=random_actions
        )
        episodes_before = runner.metrics.peek("num_episodes_lifetime", default=0)
        start = time.process_time()
        chunks = anyio.run(sample)
        elapsed = time.process_time() - start
        episodes = runner.metrics.peek("num_episodes_lifetime", default=0) - episodes_before
        return (sum(map(len, chunks)) + episodes) / elapsed

    return algo, rate


def best_of_rounds(cases: dict[str, Callable[[int], float]], steps: int, rounds: int) -> dict:
    """Measure every case once per round, alternating; keep each case's best rate."""
    for measure in cases.values():  # warm up: the first reset, specialised bytecode
        measure(max(NUM_ENVS, steps // 10))
    best = dict.fromkeys(cases, 0.0)
    for _ in range(rounds):
        for name, measure in cases.items():
            best[name] = max(best[name], measure(steps))
    return best


def main(quick: bool) -> None:
    steps = NUM_ENVS * (500 if quick else 2_000)
    rounds = 3 if quick else 5
    print(
        f"{os.cpu_count()} cores; CartPole-v1 x {NUM_ENVS} (vector entry point); "
        f"{steps} sub-env steps per run; best of {rounds} interleaved rounds\n"
    )
    algos = []
    cases: dict[str, Callable[[int], float]] = {"raw": raw_rate}
    for name, callbacks, random_actions in (
        ("random", None, True),
        ("policy", None, False),
        ("end", EndMetric, True),
        ("step", StepCount, True),
    ):
        algo, cases[name] = make_sampler(callbacks, random_actions=random_actions)
        algos.append(algo)
    try:
        best = best_of_rounds(cases, steps, rounds)
    finally:
        for algo in algos:
            algo.stop()
    raw = best["raw"]
    rows = [
        ("raw vector env, random actions (floor)", "raw"),
        ("hookbus, random actions, no callbacks", "random"),
        ("hookbus, PPO policy (numpy), no callbacks", "policy"),
        ("hookbus, random actions, on_episode_end metric", "end"),
        ("hookbus, random actions, on_episode_step subscriber", "step"),
    ]
    width = max(len(label) for label, _ in rows)
    for label, key in rows:
        print(f"{label:<{width}}  {best[key]:>12,.0f} steps/s  {best[key] / raw:5.2f}x floor")
    end_cost = 1 - best["end"] / best["random"]
    step_ns = (1 / best["step"] - 1 / best["random"]) * 1e9
    print(f"\non_episode_step subscriber: {step_ns:,.0f} ns more per sub-env step")
    print("\ntargets (issue 31):")
    checks = [
        ("random actions >= 0.50x floor", best["random"] / raw, 0.50, True),
        ("PPO policy >= 0.25x floor", best["policy"] / raw, 0.25, True),
        ("on_episode_end metric cost <= 10%", end_cost, 0.10, False),
    ]
    for label, value, bound, at_least in checks:
        ok = value >= bound if at_least else value <= bound
        print(f"  {label:<36} {value:6.2f}  {'ok' if ok else 'MISSED'}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps and rounds")
    main(parser.parse_args().quick)
