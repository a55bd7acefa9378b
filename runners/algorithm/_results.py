"""``train()``'s result: assembling it, and the draft ``on_train_result`` handlers finish.

The result is assembled from the reduced metrics and what the Algorithm knows (evaluation,
runner health, callback counts, Controls). While ``on_train_result`` runs it is a draft:
handlers add keys to it and log metrics, and a ``ResultDraft`` (the live argument
``draft``) brings what they logged into it. The Algorithm settles it once more after the
chain; handlers that must see it finished before then (the run-directory writers, which
run late in the chain) call ``draft.settle()`` themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, final

from hookbus.kernel import Bus, Control
from hookbus.metrics import MetricsLogger, results

from ..fleet import EnvRunnerGroup
from ._evaluation import EVALUATION_KEY

__all__ = (
    "CONTROL_KEY",
    "ResultDraft",
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


@final
class ResultDraft:
    """An iteration's result while ``on_train_result`` runs: ``settle()`` finishes it.

    Handlers of ``on_train_result`` get it as ``draft``. Metrics they log through
    ``metrics_logger`` belong to this iteration's result, and so do their errors under
    ``on_error="log"`` (``callbacks/errors``) and the Controls they return
    (``control``): ``settle()`` brings all of that into ``result`` so far. The Algorithm
    settles once more after the chain, so only a handler that must see the finished
    result before ``train()`` returns needs to call it (the run-directory writers do).
    """

    def __init__(
        self,
        result: dict[str, Any],
        metrics: MetricsLogger,
        control: Control | None,
        *,
        callbacks: Callable[[], dict[str, int]],
        take_control: Callable[[], Control | None],
    ) -> None:
        """Draft ``result`` (holding ``results(metrics)`` and ``control`` so far).

        ``callbacks`` counts handler errors (``callback_counts``); ``take_control`` returns
        the requests handlers made since it was last called.
        """
        self.result = result
        """The result ``train()`` returns: the dict handlers get as ``result``."""
        self._metrics = metrics
        self._logged: dict[str, Any] | None = results(metrics)  # None: closed
        self._control = control
        self._callbacks = callbacks
        self._take_control = take_control

    def settle(self) -> dict[str, Any]:
        """Bring into the result what ``on_train_result`` handlers did so far; return it.

        Metrics they logged change the result's values (keys they wrote into the result
        directly stay as they wrote them); ``callbacks`` and ``control`` are brought up to
        date. A second call brings only what changed since. After ``on_train_result`` (the
        draft is closed) it changes nothing.
        """
        logged = self._logged
        if logged is None:
            return self.result
        now = results(self._metrics)
        apply_changes(self.result, logged, now)
        self._logged = now
        self.result["callbacks"] = self._callbacks()
        self._control = Control.combine(self._control, self._take_control())
        self.result[CONTROL_KEY] = control_entry(self._control)
        return self.result

    def close(self) -> None:
        """End the draft (the Algorithm does, when ``on_train_result``'s chain is done)."""
        self._logged = None

    @property
    def closed(self) -> bool:
        """Whether the draft is closed: then ``settle()`` changes nothing."""
        return self._logged is None

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<ResultDraft {state}, iteration {self.result.get('training_iteration')}>"


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
