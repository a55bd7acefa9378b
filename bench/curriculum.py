"""RLlib's curriculum example, as ported (tests/runners/rllib_examples/curriculum_learning.py).

Runs the script as its users would, ``python curriculum_learning.py --no-tune`` with its
own defaults (100 iterations, 600k env steps at most), and reports, per seed, at which
env steps and seconds the curriculum moved to each map and when the hardest map was
solved (``task_solved`` 1.0). RLlib's docstring reports its run solving it at 164k env
steps. Run: ``python bench/curriculum.py [--seeds 0 1 2] [--max-iters 100]``.

The script's ``--no-curriculum`` mode is not run for comparison: its "emergency brake"
sends the runners back to the easiest map when the return is 0, while its task counter is
forced to the hardest, so it reports the hardest map solved once it solves the easiest
(the script's own logic, the same on RLlib).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import runpy
import sys
import time
from pathlib import Path
from typing import Any

import hookbus.runners
from hookbus.events import TrainResult

SCRIPT = (
    Path(__file__).resolve().parent.parent / "tests/runners/rllib_examples/curriculum_learning.py"
)


def run(seed: int, max_iters: int, curriculum: bool) -> dict[str, Any]:
    """Run the script once; return the env steps and seconds of each map switch and the end."""
    events: list[tuple[str, int, float]] = []
    start = time.perf_counter()
    build = hookbus.runners.AlgorithmConfig.build

    def seeded_build(config: Any, *args: Any, **kwargs: Any) -> Any:
        # The script builds the Algorithm itself: seed it, and watch its results from
        # the bus (after the script's own on_train_result handler has run).
        algo = build(config.debugging(seed=seed), *args, **kwargs)

        def watch(*, event: Any, result: dict[str, Any], **_: Any) -> None:
            steps = result["num_env_steps_sampled_lifetime"]
            task = algo._counters["current_env_task"]
            if not events or events[-1][0] != f"map {task}":
                events.append((f"map {task}", steps, time.perf_counter() - start))
            if result.get("task_solved") == 1.0:
                events.append(("solved", steps, time.perf_counter() - start))

        algo.bus.subscribe(TrainResult, watch)
        return algo

    argv = [str(SCRIPT), "--no-tune", "--stop-iters", str(max_iters)]
    if not curriculum:
        argv.append("--no-curriculum")
    sys.path.insert(0, str(SCRIPT.parent))
    old_argv, sys.argv = sys.argv, argv
    hookbus.runners.AlgorithmConfig.build = seeded_build  # type: ignore[method-assign]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            runpy.run_path(str(SCRIPT), run_name="__main__")
    finally:
        hookbus.runners.AlgorithmConfig.build = build  # type: ignore[method-assign]
        sys.argv = old_argv
    return {"events": events, "seconds": time.perf_counter() - start}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--max-iters", type=int, default=100)
    args = parser.parse_args()
    print("curriculum_learning.py --no-tune, per seed:")
    for seed in args.seeds:
        outcome = run(seed, args.max_iters, curriculum=True)
        line = ", ".join(
            f"{what} at {steps:,} steps / {secs:.0f} s" for what, steps, secs in outcome["events"]
        )
        solved = any(what == "solved" for what, _, _ in outcome["events"])
        print(f"  seed {seed}: {'SOLVED' if solved else 'not solved'} -- {line}")
    print("\nRLlib's docstring: solved at 164,000 env steps (97.7 s, its machine).")


if __name__ == "__main__":
    main()
