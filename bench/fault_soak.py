"""Fault soak: PPO keeps full batches while its runners are killed with SIGKILL (issue 32).

PPO on CartPole with two remote runners (worker processes, or Ray actors with ``--backend
ray``), ``train_batch_size=2000`` and restarts at once (``delay_between_env_runner_restarts_s
=0``). Every other iteration (the 1st, 3rd, ..., so that the last one restarts the last
victim) one runner, chosen at random, is killed with SIGKILL after a random delay from the
moment ``train()`` is called: from 0 to 1.5 times an unharmed iteration's wall time (the
second of two before the soak), so
kills land anywhere in the iteration (the restart of the previous victim, the weights'
sync, the sample requests, the metrics) or just after it. Unlike the tests, which kill at
named moments through a fault plan, this races real kills against real work.

Checked, and the run fails (exit status 1) otherwise: every iteration's learner got at
least ``train_batch_size`` env steps and ``env_runners/num_env_steps_sampled`` counts
exactly those; every victim was restarted (a new process, one restart per kill, both
runners healthy at the end); no worker process (or actor) is left after ``stop()``.

Run: ``python bench/fault_soak.py [--backend process|ray] [--iterations 24] [--seed 0]``.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import signal
import statistics
import sys
import threading
import time
from typing import Any

from hookbus.kernel import Callback
from hookbus.runners import Algorithm, PPOConfig

BATCH = 2000


class LearnedSteps(Callback):
    """On the driver: the env steps each ``train()``'s learner updates got, in all.

    Being in the config, it also makes worker processes load this script (``identity``
    below then reaches them by name).
    """

    observer = True

    def __init__(self) -> None:
        self.steps = 0

    def on_learner_update_start(self, *, batch: Any, **kwargs: Any) -> None:
        self.steps += sum(map(len, batch))


def identity(runner: Any) -> tuple[int, int]:
    """Return a runner's worker index and its process id (sent to the runners)."""
    return int(runner.worker_index), os.getpid()


def workers(algo: Algorithm) -> dict[int, int]:
    """Return worker index -> pid of the healthy remote runners."""
    return dict(algo.env_runner_group.foreach_env_runner(identity, local_env_runner=False))


def alive(pid: int) -> bool:
    """Tell whether process ``pid`` exists and is no zombie (Linux)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def kill_later(pid: int, delay: float, landed: list[bool]) -> threading.Timer:
    def kill() -> None:
        try:
            os.kill(pid, signal.SIGKILL)
            landed.append(True)
        except ProcessLookupError:  # already gone: it cannot happen here, but say so if it does
            landed.append(False)

    timer = threading.Timer(delay, kill)
    timer.start()
    return timer


def soak(backend: str, iterations: int, seed: int) -> bool:
    rng = random.Random(seed)
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_env_runners=2, backend=backend, num_cpus_per_env_runner=0.5)
        .training(train_batch_size=BATCH, minibatch_size=500, num_epochs=1)
        .fault_tolerance(restart_failed_env_runners=True, delay_between_env_runner_restarts_s=0)
        .debugging(seed=seed)
        .callbacks(LearnedSteps())
    )
    failures: list[str] = []
    rows: list[dict[str, Any]] = []
    started = time.monotonic()
    with config.build() as algo:
        algo.train()  # warm up
        t0 = time.monotonic()
        algo.train()  # its time sizes the kill delays
        unharmed = time.monotonic() - t0
        learned = algo.bus.callbacks[0]
        assert isinstance(learned, LearnedSteps)
        all_pids: set[int] = set()
        victim_pids: list[int] = []
        for i in range(1, iterations + 1):
            pids = workers(algo)
            all_pids |= set(pids.values())
            victim = delay = None
            landed: list[bool] = []
            timer = None
            if i % 2 == 1:
                victim = rng.choice(sorted(pids))
                delay = rng.uniform(0.0, 1.5 * unharmed)
                timer = kill_later(pids[victim], delay, landed)
                victim_pids.append(pids[victim])
            learned.steps = 0
            t0 = time.monotonic()
            result = algo.train()
            seconds = time.monotonic() - t0
            if timer is not None:
                timer.join()
            steps = learned.steps
            counted = result["env_runners"]["num_env_steps_sampled"]
            health = result["env_runner_group"]
            row = {
                "iteration": i,
                "victim": victim,
                "delay": delay,
                "landed": all(landed) if landed else None,
                "steps": steps,
                "counted": counted,
                "healthy": health["num_healthy_env_runners"],
                "restarts": health["num_remote_env_runner_restarts"],
                "seconds": seconds,
            }
            rows.append(row)
            if steps < BATCH:
                failures.append(f"iteration {i}: the learner got {steps} < {BATCH} env steps")
            if counted != steps:
                failures.append(f"iteration {i}: {counted} env steps counted, {steps} learned")
        final = workers(algo)
        all_pids |= set(final.values())
        kills = sum(1 for row in rows if row["landed"])
        restarts = rows[-1]["restarts"]
        if sorted(final) != [1, 2]:
            failures.append(f"healthy runners at the end: {sorted(final)}, not [1, 2]")
        if restarts != kills:
            failures.append(f"{restarts} restarts for {kills} kills")
        if any(map(alive, victim_pids)) or set(victim_pids) & set(final.values()):
            failures.append("a killed worker is still alive, or still serves its runner")
    ended = wait_for(lambda: not any(map(alive, all_pids)))
    if not ended:
        failures.append(f"left running after stop(): {[p for p in all_pids if alive(p)]}")
    if backend == "ray":
        import ray

        if not wait_for(
            lambda: ray.available_resources().get("CPU") == ray.cluster_resources()["CPU"]
        ):
            failures.append("an actor still holds its CPUs after stop()")
    report(backend, rows, unharmed, time.monotonic() - started, len(all_pids), failures)
    return not failures


def wait_for(condition: Any, seconds: float = 15.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def report(
    backend: str,
    rows: list[dict[str, Any]],
    unharmed: float,
    total: float,
    processes: int,
    failures: list[str],
) -> None:
    print(f"fault soak, backend={backend!r}, train_batch_size={BATCH}, 2 runners")
    print(
        f"{'iter':>4} {'victim':>6} {'delay s':>8} {'learned':>8} {'counted':>8} "
        f"{'healthy':>7} {'restarts':>8} {'wall s':>7}"
    )
    for r in rows:
        victim = "" if r["victim"] is None else str(r["victim"])
        delay = "" if r["delay"] is None else f"{r['delay']:.3f}"
        print(
            f"{r['iteration']:>4} {victim:>6} {delay:>8} {r['steps']:>8} {r['counted']:>8} "
            f"{r['healthy']:>7} {r['restarts']:>8} {r['seconds']:>7.2f}"
        )
    killed = [r for r in rows if r["landed"]]
    within = sum(1 for r in killed if r["healthy"] == 1)
    steps = [r["steps"] for r in rows]
    after = statistics.fmean(r["seconds"] for r in rows if r["victim"] is None)
    print(
        f"kills: {len(killed)} (noticed within their iteration: {within}; "
        f"between iterations or at its start: {len(killed) - within}); "
        f"restarts: {rows[-1]['restarts']}; worker processes used: {processes}"
    )
    print(
        f"learner batch: min {min(steps)}, mean {statistics.fmean(steps):.0f}, max {max(steps)}; "
        f"iteration wall time: unharmed {unharmed:.2f} s, "
        f"with a kill {statistics.fmean(r['seconds'] for r in killed):.2f} s mean, "
        f"the one after {after:.2f} s mean; "
        f"whole soak {total:.1f} s"
    )
    print(
        "OK: every batch full, every count exact, every runner recreated, nothing left"
        if not failures
        else "FAILED:\n  " + "\n  ".join(failures)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["process", "ray"], default="process")
    parser.add_argument("--iterations", type=int, default=24)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    logging.getLogger("hookbus").setLevel(logging.ERROR)  # a warning per failure otherwise
    if args.backend == "ray":
        import ray

        ray.init(log_to_driver=False)  # hookbus would start the same; without the kill notices
    sys.exit(0 if soak(args.backend, args.iterations, args.seed) else 1)


if __name__ == "__main__":
    main()
