"""The cost of ``wrap_env``: CleanRL-style stepping of 8 CartPoles, wrapped or not.

The loop is CleanRL's rollout loop without the network: a ``SyncVectorEnv`` of 8
CartPoles, each with ``RecordEpisodeStatistics`` (as CleanRL's ``make_env``), stepped with
actions drawn beforehand from a seeded ``np.random.Generator``, and CleanRL's own reading
of the ended episodes' returns from ``infos["final_info"]`` after every step (SAME_STEP,
as CleanRL's gymnasium 1.x script steps; NEXT_STEP reads the top-level ``episode``). Cases:

- ``unwrapped``: the vector env as it is (the baseline);
- ``wrapped end``: ``wrap_env(env, ReturnOnly())``, a callback logging each episode's
  return at its end (``on_episode_end``): the goal, at most 1.10x ``unwrapped``;
- ``wrapped none``: ``wrap_env(env)`` with no callback: the episodes' bookkeeping alone;
- ``wrapped step``: a per-step handler too (an event per sub-env step), for scale.

Time is the process's CPU time; each round measures every case once, alternating, and
each case keeps its best round (noise only ever adds time). The env's own ``step()`` is
timed inside every case by the same timer (CPU time); ``implied`` is ``unwrapped``'s total with its
time outside the env replaced by the case's, which takes the env's noise out of the ratio.
Printed, never asserted.

Run: ``python bench/wrap_env.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers import RecordEpisodeStatistics

from hookbus.kernel import Callback
from hookbus.runners.bridges import wrap_env

N_ENVS = 8


class ReturnOnly(Callback):
    """Each episode's return as a windowed mean, at its end."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        metrics_logger.log_value("episode_return", episode.get_return(), window=50)


class StepCount(ReturnOnly):
    """The same, and a count of each episode's steps kept per step."""

    def on_episode_step(self, *, episode: Any, **kwargs: Any) -> None:
        data = episode.custom_data
        data["steps"] = data.get("steps", 0) + 1


class Timed(gym.vector.VectorWrapper):
    """Add the CPU ns each ``step()`` of the env under it takes to ``spent``."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self.spent = 0

    def step(self, actions: Any) -> Any:
        start = time.thread_time_ns()
        returned = self.env.step(actions)
        self.spent += time.thread_time_ns() - start
        return returned


def make_case(mode: AutoresetMode, wrap: Callable[[Any], Any] | None) -> Callable[[int], Any]:
    """Return a function stepping ``steps`` vector steps, giving CPU ns per vector step in
    all and CPU ns per vector step inside the env's own ``step()``."""
    timed = Timed(
        gym.vector.SyncVectorEnv(
            [lambda: RecordEpisodeStatistics(gym.make("CartPole-v1"))] * N_ENVS,
            autoreset_mode=mode,
        )
    )
    envs = timed if wrap is None else wrap(timed)
    envs.reset(seed=0)
    rng = np.random.default_rng(0)
    same_step = mode == AutoresetMode.SAME_STEP
    returns: list[float] = []

    def measure(steps: int) -> tuple[float, float]:
        actions = rng.integers(0, 2, size=(steps, N_ENVS))
        timed.spent = 0
        start = time.process_time()
        for t in range(steps):
            _, _, _, _, infos = envs.step(actions[t])
            # CleanRL's reading of the returns (ppo.py, gymnasium 1.x)
            if same_step and "final_info" in infos:
                final = infos["final_info"]
                returns.extend(final["episode"]["r"][np.nonzero(final["_episode"])[0]])
            elif not same_step and "episode" in infos:
                returns.extend(infos["episode"]["r"][np.nonzero(infos["_episode"])[0]])
        return (time.process_time() - start) * 1e9 / steps, timed.spent / steps

    return measure


def wrapper(made: list[Any], *callbacks: Any) -> Callable[[Any], Any]:
    """Return a function wrapping an env with ``callbacks`` (kept in ``made``, to close)."""

    def wrap(env: Any) -> Any:
        made.append(wrap_env(env, *callbacks))
        return made[-1]

    return wrap


def best_of_rounds(
    cases: dict[str, Callable[[int], tuple[float, float]]], steps: int, rounds: int
) -> dict[str, tuple[float, float]]:
    """Measure every case once per round, alternating; keep each case's best of each."""
    for measure in cases.values():
        measure(steps // 4)
    best = dict.fromkeys(cases, (float("inf"), float("inf")))
    for _ in range(rounds):
        for name, measure in cases.items():
            total, inside = measure(steps)
            best[name] = (min(best[name][0], total), min(best[name][1], inside))
    return best


def main(quick: bool) -> None:
    steps, rounds = (500, 5) if quick else (2_000, 15)
    print(
        f"{os.cpu_count()} cores; {N_ENVS} CartPole-v1 (RecordEpisodeStatistics) in a "
        f"SyncVectorEnv, seeded random actions; {steps} vector steps per run, best of "
        f"{rounds} interleaved rounds\ntotal: CPU ns per vector step; env: CPU ns inside "
        "the env's step(); implied: unwrapped's total with its time outside the env "
        "replaced by the case's\n"
    )
    for mode in (AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP):
        wrapped: list[Any] = []
        cases = {
            "unwrapped": make_case(mode, None),
            "wrapped end": make_case(mode, wrapper(wrapped, ReturnOnly())),
            "wrapped none": make_case(mode, wrapper(wrapped)),
            "wrapped step": make_case(mode, wrapper(wrapped, StepCount())),
        }
        best = best_of_rounds(cases, steps, rounds)
        for envs in wrapped:
            envs.close()
        base_total, base_env = best["unwrapped"]
        print(f"{mode.name}:")
        for name, (total, inside) in best.items():
            implied = (base_env + total - inside) / base_total
            print(
                f"  {name:<13} total {total:>9,.0f} ({total / base_total:5.3f}x unwrapped)"
                f"  env {inside:>9,.0f}  implied {implied:5.3f}x"
            )
        total, inside = best["wrapped end"]
        print(
            f"  goal: wrapped end <= 1.10x unwrapped: {total / base_total:.3f}x end to end, "
            f"{(base_env + total - inside) / base_total:.3f}x implied\n"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps and rounds")
    main(parser.parse_args().quick)
