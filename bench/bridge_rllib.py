"""The RLlib bridge's cost: one callback as a plain RLlibCallback, against the same through
``rllib_callbacks`` (as a hookbus Callback, and as the RLlibCallback itself), on RLlib's own
CartPole sampling (its local SingleAgentEnvRunner, torch on the CPU, 1 sub-env).

The callback does what a metrics callback does: a value per step, one per episode. Every case
samples the same number of env steps, in the same process, interleaved round by round; the
best round of each counts (noise on a shared machine only adds time), in wall time and in
this process's CPU time. A second table isolates the hooks: the same episode step handed
to each case's ``on_episode_step`` many times, its cost set against a sampled step's. The
goal is a bridge at most 5% slower than the plain callback (issue 41).

Run: ``python bench/bridge_rllib.py [--steps N] [--rounds R]`` (needs ``hookbus[rllib]``).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.callbacks.callbacks import RLlibCallback

from hookbus.kernel import Callback
from hookbus.runners.bridges import rllib_callbacks


class PlainMetrics(RLlibCallback):
    """The baseline: RLlib calls it directly."""

    def on_episode_step(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("step_reward", episode.get_rewards(-1), reduce="sum")

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("chunk_return", episode.get_return(), window=100)


class HookbusMetrics(Callback):
    """The same, as a hookbus Callback (reading the event instead of RLlib's episode)."""

    def on_episode_step(self, *, event: Any, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("step_reward", event.reward, reduce="sum")

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("chunk_return", episode.get_return(), window=100)


class NoCallbacks(RLlibCallback):
    """The floor: RLlib's sampling with a callbacks class that overrides nothing."""


CASES: dict[str, type] = {
    "no callback (floor)": NoCallbacks,
    "plain RLlibCallback": PlainMetrics,
    "bridge, hookbus Callback": rllib_callbacks(HookbusMetrics),
    "bridge, the RLlibCallback": rllib_callbacks(PlainMetrics),
}


def runner(callbacks: type) -> Any:
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_env_runners=0)
        .rl_module(model_config={"fcnet_hiddens": [32, 32]})
        .debugging(seed=0)
        .callbacks(callbacks)
    )
    return config.build_algo()


def hook_cost(algo: Any, repeats: int) -> float:
    """Return the seconds one ``on_episode_step`` call of ``algo``'s callbacks takes."""
    runner = algo.env_runner
    (episode, *_) = runner.sample(num_timesteps=50, explore=True)
    (callbacks,) = runner._callbacks  # RLlib's list of its callback instances (one here)
    arguments = {
        "episode": episode,
        "env_runner": runner,
        "metrics_logger": runner.metrics,
        "env": runner.env.unwrapped,
        "rl_module": runner.module,
        "env_index": 0,
    }
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeats):
            callbacks.on_episode_step(**arguments)
        best = min(best, (time.perf_counter() - start) / repeats)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4000, help="env steps per round")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    algos = {name: runner(cls) for name, cls in CASES.items()}
    best = dict.fromkeys(CASES, float("inf"))
    cpu = dict.fromkeys(CASES, float("inf"))
    try:
        for algo in algos.values():  # warm up: first episodes, torch's first calls
            algo.env_runner.sample(num_timesteps=args.steps // 4, explore=True)
        for round_ in range(args.rounds):
            for name, algo in algos.items():
                start, start_cpu = time.perf_counter(), time.process_time()
                algo.env_runner.sample(num_timesteps=args.steps, explore=True)
                best[name] = min(best[name], (time.perf_counter() - start) / args.steps)
                cpu[name] = min(cpu[name], (time.process_time() - start_cpu) / args.steps)
            print(f"round {round_ + 1}/{args.rounds} done", flush=True)
        hooks = {name: hook_cost(algo, 20_000) for name, algo in algos.items()}
    finally:
        for algo in algos.values():
            algo.stop()
    plain, plain_cpu = best["plain RLlibCallback"], cpu["plain RLlibCallback"]
    print(f"\nRLlib sampling, {args.steps} env steps per round, best of {args.rounds}:")
    print(f"{'case':<28} {'us/step':>8} {'vs plain':>9} {'cpu us':>8} {'vs plain':>9}")
    for name in CASES:
        wall, used = best[name], cpu[name]
        print(
            f"{name:<28} {wall * 1e6:>8.1f} {wall / plain:>8.3f}x "
            f"{used * 1e6:>8.1f} {used / plain_cpu:>8.3f}x"
        )
    step = min(plain, plain_cpu)
    print(f"\none on_episode_step call, against a sampled step ({step * 1e6:.0f} us):")
    print(f"{'case':<28} {'us/call':>8} {'extra/step':>11}")
    for name, seconds in hooks.items():
        extra = (seconds - hooks["plain RLlibCallback"]) / step
        print(f"{name:<28} {seconds * 1e6:>8.2f} {extra:>+10.2%}")
    print("goal: the bridge rows at most 1.050x the plain RLlibCallback (+5.00% a step)")


if __name__ == "__main__":
    main()
