"""The SB3 bridge's cost: PPO sampling CartPole, a per-step callback plain or through the bus.

Stable-Baselines3's PPO collects rollouts (its torch policy, its ``DummyVecEnv`` of
CartPoles with Monitor) with training switched off, so that the callbacks' cost is not
diluted by gradient steps. The same logic, a per-sub-env step count and the episode's
return logged as a windowed mean at its end, runs three ways:

- ``plain``: an SB3 ``BaseCallback`` reading ``self.locals`` (the baseline, issue 41);
- ``bridge step``: a hookbus ``Callback`` with ``on_episode_step`` and ``on_episode_end``
  through ``sb3_callback`` (an Episode per sub-env episode, one event per step);
- ``bridge end``: only the ``on_episode_end`` part through the bridge (no per-step event).

``none`` (a callback doing nothing) is the floor. Time is the process's CPU time with
torch on one thread: every case runs in this one process, and on a shared machine wall
time mostly measures the neighbours. Each round measures every case once, alternating;
each case keeps its best round (noise only ever adds time). Goal: ``bridge step`` at most
1.10x ``plain``. Printed, never asserted.

The end-to-end ratio carries the machine's noise (``none`` and ``plain`` differ by several
percent on a shared machine). So each case also times its callback's ``on_step`` inside
the same runs (one timer, the same for every case), and prints the ratio that implies:
``plain``'s total with ``plain``'s on_step time replaced by the case's.

Run: ``python bench/bridge_sb3.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.logger import Logger

from hookbus.kernel import Callback
from hookbus.metrics import MetricsLogger
from hookbus.runners.bridges import sb3_callback

N_STEPS = 256  # PPO's rollout length per sub-env


class SamplingPPO(PPO):
    """PPO that only collects rollouts: what is measured is sampling and callbacks."""

    def train(self) -> None:
        pass


class Nothing(BaseCallback):
    """The floor: SB3's callback machinery with nothing in it."""

    def _on_step(self) -> bool:
        return True


class PlainSteps(BaseCallback):
    """The logic as an SB3 user writes it: per sub-env counters over ``self.locals``."""

    def __init__(self) -> None:
        super().__init__()
        self.metrics = MetricsLogger()
        self.steps: Any = None
        self.returns: Any = None

    def _on_training_start(self) -> None:
        n = self.training_env.num_envs
        self.steps, self.returns = np.zeros(n, dtype=np.int64), np.zeros(n)

    def _on_step(self) -> bool:
        rewards, dones = self.locals["rewards"], self.locals["dones"]
        for i in range(len(dones)):  # per sub-env, as the bridge's handler runs per episode
            self.steps[i] += 1
            self.returns[i] += rewards[i]
            if dones[i]:
                self.metrics.log_value("episode_return", float(self.returns[i]), window=50)
                self.steps[i], self.returns[i] = 0, 0.0
        return True


class StepsAndReturn(Callback):
    """The same logic as hookbus handlers: the episode keeps the count and the return."""

    def on_episode_step(self, *, episode: Any, **kwargs: Any) -> None:
        data = episode.custom_data
        data["steps"] = data.get("steps", 0) + 1

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("episode_return", episode.get_return(), window=50)


class ReturnOnly(Callback):
    """Only the end of episodes: no handler per step."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("episode_return", episode.get_return(), window=50)


def make_case(n_envs: int, callback: Any) -> Callable[[int], tuple[float, float]]:
    """Return a function sampling about ``steps`` sub-env steps, giving CPU ns per step in
    all and wall ns per step inside the callback's ``on_step``."""
    env = make_vec_env("CartPole-v1", n_envs=n_envs, seed=0)
    model = SamplingPPO("MlpPolicy", env, n_steps=N_STEPS, seed=0, device="cpu")
    # SB3's learn() makes a logger folder (tempdir/SB3-<time>) unless it has a logger.
    model.set_logger(Logger(folder=None, output_formats=[]))
    inside = [0]  # ns spent in on_step: the same timer around every case's callback
    on_step = callback.on_step

    def timed_on_step() -> bool:
        start = time.perf_counter_ns()
        go_on: bool = on_step()
        inside[0] += time.perf_counter_ns() - start
        return go_on

    callback.on_step = timed_on_step  # SB3 calls the callback it is given: this attribute

    def measure(steps: int) -> tuple[float, float]:
        start_steps, inside[0] = model.num_timesteps, 0
        start = time.process_time()
        # reset_num_timesteps=False: SB3 adds the steps done so far to the total itself.
        steps = max(steps, N_STEPS * n_envs)
        model.learn(steps, callback=callback, log_interval=None, reset_num_timesteps=False)
        done = model.num_timesteps - start_steps
        return (time.process_time() - start) * 1e9 / done, inside[0] / done

    return measure


def best_of_rounds(
    cases: dict[str, Callable[[int], tuple[float, float]]], steps: int, rounds: int
) -> dict[str, tuple[float, float]]:
    """Measure every case once per round, alternating; keep each case's best of each."""
    for measure in cases.values():  # warm up: first resets, torch's first calls
        measure(steps // 4)
    best = dict.fromkeys(cases, (float("inf"), float("inf")))
    for _ in range(rounds):
        for name, measure in cases.items():
            total, inside = measure(steps)
            best[name] = (min(best[name][0], total), min(best[name][1], inside))
    return best


def main(quick: bool) -> None:
    torch.set_num_threads(1)
    # Many short rounds rather than a few long ones: on a shared machine the best of many
    # is what comes closest to each case's own cost (a few long runs varied by +-25% here).
    steps = 2_048
    rounds = 4 if quick else 12
    print(
        f"{os.cpu_count()} cores; SB3 PPO (MlpPolicy, no training) on CartPole-v1; "
        f"{steps} sub-env steps per run; best of {rounds} interleaved rounds\n"
        "total: CPU ns per sub-env step; on_step: wall ns inside the callback per sub-env "
        "step;\nimplied: plain's total with its on_step time replaced by the case's\n"
    )
    for n_envs in (1, 8):
        bridges = [sb3_callback(StepsAndReturn()), sb3_callback(ReturnOnly())]
        cases = {
            "none": make_case(n_envs, Nothing()),
            "plain": make_case(n_envs, PlainSteps()),
            "bridge step": make_case(n_envs, bridges[0]),
            "bridge end": make_case(n_envs, bridges[1]),
        }
        best = best_of_rounds(cases, steps, rounds)
        for bridge in bridges:
            bridge.close()
        plain_total, plain_inside = best["plain"]
        print(f"{n_envs} sub-env(s):")
        for name, (total, inside) in best.items():
            implied = (plain_total - plain_inside + inside) / plain_total
            print(
                f"  {name:<12} total {total:>9,.0f} ({total / plain_total:5.3f}x plain)"
                f"  on_step {inside:>7,.0f}  implied {implied:5.3f}x plain"
            )
        end_to_end = best["bridge step"][0] / plain_total
        implied = (plain_total - plain_inside + best["bridge step"][1]) / plain_total
        print(
            f"  goal: bridge step <= 1.10x plain: {end_to_end:.3f}x end to end, "
            f"{implied:.3f}x implied\n"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps and rounds")
    main(parser.parse_args().quick)
