"""How an evaluation round's budget is cut into shares and units (``fleet.Work`` hands them out)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..config import EnvRunnersSettings, EvaluationSettings

if TYPE_CHECKING:
    from ..config import AlgorithmConfig

__all__ = ("auto_steps", "split", "units")


def split(budget: int, k: int) -> list[int]:
    """Split ``budget`` over ``k`` runners: even shares, the first ``budget % k`` one more."""
    base, extra = divmod(budget, k)
    return [base + (i < extra) for i in range(k)]


def units(budget: int, k: int, config: AlgorithmConfig[Any], by_episodes: bool) -> list[int]:
    """Cut ``budget`` into the units that asynchronous evaluation hands out one by one.

    An episode per sub-env (a request then wastes no partial episode), or for env steps
    about a quarter of an even share, in whole vector steps.
    """
    num_envs = config.num_envs_per_env_runner
    if by_episodes:
        size = num_envs
    else:
        size = max(num_envs, math.ceil(budget / (4 * k)))
        size = math.ceil(size / num_envs) * num_envs
    whole, rest = divmod(budget, size)
    return [size] * whole + ([rest] if rest else [])


def auto_steps(left_s: float, throughput: float | None, config: AlgorithmConfig[Any]) -> int:
    """Size an "auto" unit: the steps that fill ``left_s``, clamped, in whole vector steps."""
    evaluation = config.settings(EvaluationSettings)
    low = evaluation.evaluation_auto_duration_min_env_steps_per_sample
    high = evaluation.evaluation_auto_duration_max_env_steps_per_sample
    steps = low if throughput is None else min(high, max(low, int(left_s * throughput)))
    num_envs = config.settings(EnvRunnersSettings).num_envs_per_env_runner
    return math.ceil(steps / num_envs) * num_envs
