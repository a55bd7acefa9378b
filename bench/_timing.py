"""Shared timing helpers for the benchmarks: best-of-N wall time per operation, in ns."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

__all__ = ("best_ns", "best_ns_async", "ratio_table")


def best_ns(loop: Callable[[int], object], n: int, repeats: int = 7) -> float:
    """Return the best ns per iteration of ``loop(n)`` over ``repeats`` runs.

    The best, not the mean: on a shared machine noise only ever adds time.
    """
    loop(max(1, n // 10))  # warm up caches and specialised bytecode
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter_ns()
        loop(n)
        best = min(best, (time.perf_counter_ns() - start) / n)
    return best


async def best_ns_async(
    loop: Callable[[int], Awaitable[object]], n: int, repeats: int = 7
) -> float:
    """Return the best ns per iteration of ``await loop(n)`` over ``repeats`` runs."""
    await loop(max(1, n // 10))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter_ns()
        await loop(n)
        best = min(best, (time.perf_counter_ns() - start) / n)
    return best


def ratio_table(rows: list[tuple[str, float]], baselines: dict[str, float]) -> str:
    """Format ``(name, ns)`` rows with one ratio column per named baseline."""
    names = list(baselines)
    width = max(len(name) for name, _ in rows)
    head = f"{'case':<{width}}  {'ns/op':>9}" + "".join(f"  {'/' + b:>12}" for b in names)
    lines = [head, "-" * len(head)]
    for name, ns in rows:
        ratios = "".join(f"  {ns / baselines[b]:>11.2f}x" for b in names)
        lines.append(f"{name:<{width}}  {ns:>9.0f}{ratios}")
    return "\n".join(lines)
