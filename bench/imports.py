"""What importing hookbus's packages costs a fresh process, against anyio and msgspec alone.

A service that embeds the bus pays for ``import hookbus.kernel``: the goal is within 2x of
``import anyio, msgspec`` (what the kernel stands on), measured in the same run. Each case
is a new interpreter (``python -c``), timed from outside; the interpreter's own start
(``python -c pass``) is taken off every case, so the ratio compares only the imports. The
best of ``--repeats`` runs each, alternated, as noise only ever adds time. Run:
``python bench/imports.py [--repeats N]``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

CASES = {
    "python -c pass": "pass",
    "import anyio, msgspec (baseline)": "import anyio, msgspec",
    "import hookbus.events": "import hookbus.events",
    "import hookbus.kernel": "import hookbus.kernel",
    "from hookbus.runners.bridges import rllib_callbacks": (
        "from hookbus.runners.bridges import rllib_callbacks"
    ),
    "import numpy (for scale)": "import numpy",
}


def run_once(code: str) -> float:
    """Return the wall seconds of a fresh interpreter running ``code``."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    best = dict.fromkeys(CASES, float("inf"))
    for _ in range(args.repeats):  # alternate the cases, so load hits them alike
        for name, code in CASES.items():
            best[name] = min(best[name], run_once(code))
    start = best["python -c pass"]
    baseline = best["import anyio, msgspec (baseline)"] - start
    width = max(map(len, CASES))
    print(f"{'case':<{width}}  {'ms':>7}  {'/baseline':>9}  (interpreter start taken off)")
    for name in CASES:
        if name == "python -c pass":
            print(f"{name:<{width}}  {start * 1e3:>7.1f}  {'':>9}  (the start itself)")
            continue
        cost = best[name] - start
        print(f"{name:<{width}}  {cost * 1e3:>7.1f}  {cost / baseline:>8.2f}x")
    print(f"\ngoal: import hookbus.kernel within 2x of the baseline, best of {args.repeats}")


if __name__ == "__main__":
    main()
