"""``train()``'s result: the metrics, evaluation, runner health, callback counts, Controls."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hookbus.kernel import Bus, Control
from hookbus.metrics import MetricsLogger, results

from ..fleet import EnvRunnerGroup
from ._evaluation import EVALUATION_KEY

__all__ = (
    "CONTROL_KEY",
    "apply_changes",
    "assemble_result",
    "callback_counts",
    "control_entry",
    "copy_tree",
)

CONTROL_KEY = "control"
_NO_CONTROL = Control()


def assemble_result(
    metrics: MetricsLogger,
    *,
    training_iteration: int,
    group: EnvRunnerGroup,
    evaluation: dict[str, Any] | None,
    callbacks: dict[str, int],
) -> dict[str, Any]:
    """Return the iteration's result: reduced ``metrics`` plus what the Algorithm knows.

    ``group`` is the training runners (their health), ``evaluation`` the latest evaluation
    round's metrics (None before the first), ``callbacks`` the ``callback_counts()``.
    """
    result = results(metrics)
    if evaluation is not None:
        # The latest round's metrics, as its on_evaluate_end handlers left them; every
        # later result carries them too (RLlib's always_attach_evaluation_results).
        result[EVALUATION_KEY] = copy_tree(evaluation)
    result["training_iteration"] = training_iteration
    # RLlib's keys for the training runners' health (its result's "env_runner_group").
    healthy, restarts = group.num_healthy_remote_workers(), group.num_remote_worker_restarts()
    result["env_runner_group"] = {
        "num_healthy_env_runners": healthy,
        "num_remote_env_runner_restarts": restarts,
    }
    # The same counts where hookbus's own results keep runner figures.
    runners = result.setdefault("env_runners", {})
    runners["num_healthy_env_runners"] = healthy
    runners["num_env_runner_restarts"] = restarts
    result["callbacks"] = callbacks
    return result


def callback_counts(bus: Bus, groups: Iterable[EnvRunnerGroup]) -> dict[str, int]:
    """Return ``callbacks/errors`` and ``callbacks/quarantined`` (handlers removed so far).

    Errors count those on ``bus`` and on the remote runners' own buses (of ``groups``).
    """
    statistics = bus.statistics()
    remote = sum(group.handler_errors() for group in groups)
    return {
        "errors": statistics.errors + remote,
        "quarantined": sum(len(names) for names in statistics.quarantined.values()),
    }


def control_entry(control: Control | None) -> dict[str, Any]:
    """Return ``result["control"]`` for the requests in ``control`` (none: all False)."""
    return (control or _NO_CONTROL).to_result()


def copy_tree(tree: dict[str, Any]) -> dict[str, Any]:
    """Copy the nested dicts of ``tree`` (its leaves are shared)."""
    return {k: copy_tree(v) if isinstance(v, dict) else v for k, v in tree.items()}


def apply_changes(result: dict[str, Any], before: dict[str, Any], after: dict[str, Any]) -> None:
    """Copy into ``result`` every value that changed from ``before`` to ``after``."""
    for key, value in after.items():
        old = before.get(key)
        if isinstance(value, dict) and isinstance(old, dict) and isinstance(result.get(key), dict):
            apply_changes(result[key], old, value)
        elif key not in before or old != value:
            result[key] = value
