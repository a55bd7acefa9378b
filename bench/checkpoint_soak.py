"""Checkpoint soak: saves killed with SIGKILL never leave a torn checkpoint (issue 33).

A child process trains PPO on CartPole (``train_batch_size=200``) and saves a checkpoint
after every iteration into ``<run>/checkpoint_<N>``, going on from the newest complete
checkpoint it finds there (``list_checkpoints``). Each round kills one child with SIGKILL:

- **aimed** rounds (odd ones) kill it at a phase of a save, chosen at random, through the
  fault plan (``HOOKBUS_FAULT_PLAN``, a ``Kill`` with ``request="save"``): ``begun``,
  ``written``, ``synced`` or ``renamed``, of its 1st to 3rd save;
- **timed** rounds (even ones) send SIGKILL from here after a random delay between the
  child's start and 1.5 times its mean life in the aimed rounds so far, racing real work:
  kills land in imports, training, saves or restores.

After each kill it checks, and the run fails (exit status 1) otherwise: every
``checkpoint_*`` folder in the run directory is complete (a listed checkpoint, its file
verified by its checksum); the newest restores (``Algorithm.from_checkpoint``) with the
training iteration its name says; the newest is at least as new as before the round (a kill
never loses a finished save); the only other entries are the hidden temporary folders of
killed saves, and those are gone after the next save.

Run: ``python bench/checkpoint_soak.py [--rounds 20] [--seed 0]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from hookbus.runners import Algorithm, PPOConfig, list_checkpoints

PHASES = ("begun", "written", "synced", "renamed")
SAVES_PER_CHILD = 4  # a child that is not killed exits after this many saves


def child(run: Path) -> None:
    """Train on from the newest checkpoint in ``run``, saving after every iteration."""
    saved = list_checkpoints(run)
    if saved:
        algo = Algorithm.from_checkpoint(saved[-1])
    else:
        config = PPOConfig().environment("CartPole-v1").debugging(seed=0)
        algo = config.training(train_batch_size=200, minibatch_size=100, num_epochs=1).build()
    with algo:
        for _ in range(SAVES_PER_CHILD):
            algo.train()
            algo.save_to_path(run / f"checkpoint_{algo.training_iteration:06d}")


def run_child(
    run: Path, plan: list[dict[str, object]], kill_after: float | None
) -> tuple[int, float]:
    """Start a child on ``run``; SIGKILL it after ``kill_after`` s if given; return (status, s)."""
    env = {**os.environ, "HOOKBUS_FAULT_PLAN": json.dumps(plan)}
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, __file__, "--child", str(run)], env=env)
    if kill_after is not None:
        try:
            proc.wait(kill_after)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
    status = proc.wait()
    return status, time.monotonic() - started


def check(run: Path, newest_before: int) -> tuple[int, set[str], list[str]]:
    """Check ``run`` after a kill; return (newest iteration, hidden leftovers, failures)."""
    failures: list[str] = []
    listed = list_checkpoints(run)
    names = {p.name for p in listed}
    hidden = [e.name for e in os.scandir(run) if e.name.startswith(".")]
    other = [e.name for e in os.scandir(run) if e.name not in names and e.name not in hidden]
    if other:
        failures.append(f"torn or foreign entries: {sorted(other)}")
    failures += [f"an unexpected hidden entry: {n}" for n in hidden if ".tmp-" not in n]
    newest = int(listed[-1].name.split("_")[1]) if listed else 0
    if newest < newest_before:
        failures.append(f"newest checkpoint went back from {newest_before} to {newest}")
    for path in listed[:-1]:
        try:
            Algorithm.from_checkpoint(path).stop()  # verifies the checksum and every section
        except Exception as exc:
            failures.append(f"{path.name} does not restore: {exc}")
    if listed:
        algo = Algorithm.from_checkpoint(listed[-1])
        with algo:
            if algo.training_iteration != newest:
                failures.append(f"{listed[-1].name} holds iteration {algo.training_iteration}")
    return newest, set(hidden), failures


def soak(rounds: int, seed: int) -> bool:
    rng = random.Random(seed)
    failures: list[str] = []
    kills: Counter[str] = Counter()
    hidden: set[str] = set()
    cleaned = 0
    lives: list[float] = []
    newest = 0
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hookbus-checkpoint-soak-") as tmp:
        run = Path(tmp) / "run"
        run.mkdir()
        for i in range(1, rounds + 1):
            if i % 2 == 1 or not lives:
                phase, nth = rng.choice(PHASES), rng.randint(1, 3)
                marker = str(Path(tmp) / f"fired-{i}")
                plan = [{"runner": 0, "request": "save", "at": phase, "nth": nth, "marker": marker}]
                status, seconds = run_child(run, plan, None)
                lives.append(seconds)
                what = f"aimed {phase}#{nth}"
            else:
                delay = rng.uniform(0.0, 1.5 * statistics.mean(lives))
                status, seconds = run_child(run, [], delay)
                what = f"timed {delay:.2f}s"
            killed = status == -signal.SIGKILL
            kills[what.split()[0] + (" (killed)" if killed else " (finished)")] += 1
            if what.startswith("aimed") and not killed:
                failures.append(f"round {i}: the aimed kill {what} did not fire (status {status})")
            before, hidden_before = newest, hidden
            newest, hidden, found = check(run, before)
            if newest > before and hidden & hidden_before:  # a save finished: they must go
                found.append(f"leftovers of earlier kills not cleaned up: {hidden & hidden_before}")
            cleaned += len(hidden_before - hidden)
            failures += [f"round {i} ({what}): {f}" for f in found]
            print(f"round {i:2}: {what:16} status {status:4}  newest checkpoint_{newest:06d}  "
                  f"hidden leftovers {len(hidden)}  {seconds:.2f} s", flush=True)  # fmt: skip
    print()
    print(f"{rounds} rounds in {time.monotonic() - started:.1f} s; children: {dict(kills)}")
    print(f"newest checkpoint at the end: iteration {newest}; temporary folders of killed "
          f"saves removed by later saves: {cleaned}")  # fmt: skip
    for failure in failures:
        print(f"FAILED: {failure}")
    print("ok: every kill left complete checkpoints only; the newest always restored"
          if not failures else f"{len(failures)} failures")  # fmt: skip
    return not failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", metavar="RUN", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child))
        return
    sys.exit(0 if soak(args.rounds, args.seed) else 1)


if __name__ == "__main__":
    main()
