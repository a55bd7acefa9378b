"""Assembling ``train()``'s result: the metrics, evaluation, runner health, callback counts.

The functions take the Algorithm as ``Any``: it imports them, and naming its type here
would close an import circle.
"""

from __future__ import annotations

from typing import Any

from hookbus.metrics import results

from ._evaluation import EVALUATION_KEY

__all__ = ("apply_changes", "assemble_result", "callback_counts", "copy_tree")


def assemble_result(algorithm: Any) -> dict[str, Any]:
    """Return the iteration's result: reduced metrics plus what the Algorithm knows."""
    result = results(algorithm.metrics)
    evaluation = algorithm._evaluation
    if evaluation is not None and evaluation.last is not None:
        # The latest round's metrics, as its on_evaluate_end handlers left them; every
        # later result carries them too (RLlib's always_attach_evaluation_results).
        result[EVALUATION_KEY] = copy_tree(evaluation.last)
    result["training_iteration"] = algorithm.training_iteration
    group = algorithm.env_runner_group
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
    result["callbacks"] = callback_counts(algorithm)
    return result


def callback_counts(algorithm: Any) -> dict[str, int]:
    """Return ``callbacks/errors`` and ``callbacks/quarantined`` (handlers removed so far)."""
    quarantined = algorithm.bus.statistics().quarantined
    return {
        "errors": _handler_errors(algorithm),
        "quarantined": sum(len(names) for names in quarantined.values()),
    }


def _handler_errors(algorithm: Any) -> int:
    """Count handler errors on this bus and on the remote runners' own buses."""
    groups = [algorithm._env_runner_group, algorithm.eval_env_runner_group]
    remote: int = sum(group.handler_errors() for group in groups if group is not None)
    errors: int = algorithm.bus.statistics().errors
    return errors + remote


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
