"""Checkpoint reliability and speed: bit flips, crafted contents, save and restore times.

1. Single-bit flips of a small PPO checkpoint (fcnet_hiddens [8], one iteration), each
   restored into one Algorithm: how many load silently, how many raise (by type), and how
   many of those leave the Algorithm changed.
2. Crafted contents: a network-size mismatch ([64, 64] into [32]), training_iteration="two"
   and a broken metrics section: the exception and whether the Algorithm changed.
3. One save and one restore of a default-size PPO checkpoint (best and median of N), and
   the cost of the modules' own folders: writing the checkpoint file with them against
   the file alone, into new folders and into an existing one.

Uses private functions, ``runners.algorithm._checkpoint.read_checkpoint/write_checkpoint``
to craft files, ``_module_files.module_files`` for the modules' folders. Run:
``python bench/checkpoints.py [--flips N] [--repeats N]``.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from hookbus.events import codec
from hookbus.runners import Algorithm, PPOConfig
from hookbus.runners.algorithm._checkpoint import CHECKPOINT_FILE, read_checkpoint, write_checkpoint
from hookbus.runners.algorithm._module_files import module_files


def small_ppo(hiddens: list[int]) -> PPOConfig:
    return (
        PPOConfig()
        .environment("CartPole-v1")
        .training(
            train_batch_size=64, minibatch_size=32, num_epochs=1, model={"fcnet_hiddens": hiddens}
        )
        .debugging(seed=0)
    )


def fingerprint(algo: Algorithm) -> bytes:
    """Return the Algorithm's restorable state as bytes (equal bytes: unchanged)."""
    state = {
        "iteration": algo.training_iteration,
        "learner": algo.learner.get_state(),
        "metrics": algo.metrics.get_state(),
    }
    return codec.encode_msgpack(state)


MESSAGES: dict[str, str] = {}  # the last message of each exception type, to show


def outcome(algo: Algorithm, path: Path) -> tuple[str, bool]:
    """Restore ``path``; return ("loaded" or the exception's type, whether state changed)."""
    before = fingerprint(algo)
    try:
        algo.restore_from_path(path)
    except Exception as exc:
        MESSAGES[type(exc).__name__] = str(exc)
        return type(exc).__name__, fingerprint(algo) != before
    return "loaded", fingerprint(algo) != before


def bit_flips(base: Path, work: Path, flips: int) -> None:
    data = (base / CHECKPOINT_FILE).read_bytes()
    rng = np.random.default_rng(0)
    counts: collections.Counter[tuple[str, bool]] = collections.Counter()
    with small_ppo([8]).build() as algo:
        algo.restore_from_path(base)
        for bit in rng.choice(len(data) * 8, size=flips, replace=False):
            flipped = bytearray(data)
            flipped[bit // 8] ^= 1 << (bit % 8)
            work.mkdir(exist_ok=True)
            (work / CHECKPOINT_FILE).write_bytes(bytes(flipped))
            counts[outcome(algo, work)] += 1
            algo.restore_from_path(base)  # start every flip from the same state
    print(f"{flips} single-bit flips of a {len(data)}-byte checkpoint:")
    for (kind, changed), n in sorted(counts.items()):
        print(f"  {kind:>20}: {n:4d}  ({'state changed' if changed else 'state unchanged'})")


def crafted(base: Path, work: Path, name: str, change: Any) -> None:
    state = read_checkpoint(base)
    state.pop("version", None)  # write_checkpoint adds its own
    change(state)
    write_checkpoint(work / name, state)
    with small_ppo([8]).build() as algo:
        algo.train()
        algo.train()  # one iteration ahead of the checkpoint: a restore must change it
        kind, changed = outcome(algo, work / name)
        try:
            algo.train()
            after = "trains on"
        except Exception as exc:
            after = f"next train() raises {type(exc).__name__}"
    print(f"  {name:>20}: {kind}, state {'CHANGED' if changed else 'unchanged'}, {after}")
    print(f"  {'':>20}  {MESSAGES.get(kind, '')[:300]}")


def mismatch(work: Path) -> None:
    with small_ppo([64, 64]).build() as big:
        big.train()
        big.save_to_path(work / "big")
    with small_ppo([32]).build() as algo:
        algo.train()
        algo.train()
        kind, changed = outcome(algo, work / "big")
    print(f"  {'[64, 64] into [32]':>20}: {kind}, state {'CHANGED' if changed else 'unchanged'}")
    print(f"  {'':>20}  {MESSAGES.get(kind, '')[:300]}")


def broken_metrics(state: dict[str, Any]) -> None:
    # A good record first, then a bad one: a loader that resets first ends half-loaded.
    state["metrics"]["stats"].append({"key": ["broken"], "spec": "garbage", "state": {}})


def timing(work: Path, repeats: int) -> None:
    with PPOConfig().environment("CartPole-v1").debugging(seed=0).build() as algo:
        algo.train()
        saves, restores = [], []
        for _ in range(repeats):
            start = time.perf_counter()
            algo.save_to_path(work / "default")
            saves.append(time.perf_counter() - start)
            start = time.perf_counter()
            algo.restore_from_path(work / "default")
            restores.append(time.perf_counter() - start)
        # The modules' folders (RLModule.from_checkpoint's) against the file alone, written
        # alternately into new folders and into one existing folder.
        state = read_checkpoint(work / "default")
        files = module_files(algo.get_module(), multi_agent=False)
        alone: dict[str, list[float]] = {"new": [], "existing": []}
        both: dict[str, list[float]] = {"new": [], "existing": []}
        for i in range(repeats):
            for mode in ("new", "existing"):
                for times, extra in ((alone, None), (both, files)):
                    target = work / (f"{mode}-{i}-{len(extra or ())}" if mode == "new" else mode)
                    start = time.perf_counter()
                    write_checkpoint(target, state, extra)
                    times[mode].append(time.perf_counter() - start)
    size = (work / "default" / CHECKPOINT_FILE).stat().st_size
    print(f"default PPO checkpoint ({size} bytes), {repeats} repeats, ms best / median:")
    for label, times in (("save", saves), ("restore", restores)):
        print(f"  {label:>8}: {min(times) * 1e3:7.2f} / {statistics.median(times) * 1e3:7.2f}")
    print("writing the file with the module folders, against the file alone (median ratio):")
    for mode in ("new", "existing"):
        ratio = statistics.median(both[mode]) / statistics.median(alone[mode])
        print(
            f"  {mode + ' folder':>16}: {ratio:5.2f}x "
            f"({statistics.median(both[mode]) * 1e3:.2f} ms against "
            f"{statistics.median(alone[mode]) * 1e3:.2f} ms)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flips", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with small_ppo([8]).build() as algo:
            algo.train()
            algo.save_to_path(work / "base")
        bit_flips(work / "base", work / "flipped", args.flips)
        print("crafted contents:")
        mismatch(work)
        crafted(
            work / "base", work, "iteration 'two'", lambda s: s.update(training_iteration="two")
        )
        crafted(work / "base", work, "broken metrics", broken_metrics)
        timing(work, args.repeats)


if __name__ == "__main__":
    main()
