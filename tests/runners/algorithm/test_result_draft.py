"""on_train_result's ``draft``: a handler late in the chain settles the result it sees."""

from __future__ import annotations

from typing import Any

from hookbus.kernel import Callback, Control
from hookbus.runners import PPOConfig, ResultDraft


class Early(Callback):
    """Logs a metric, asks to checkpoint, fails under on_error="log": before the settler."""

    priority = 10

    def on_train_result(self, *, metrics_logger: Any, result: Any, **kwargs: Any) -> Control:
        metrics_logger.log_value("early", 3.0, reduce="sum", clear_on_reduce=True)
        result["added"] = "by hand"
        return Control(checkpoint=True)


class Failing(Callback):
    priority = 5

    def on_train_result(self, **kwargs: Any) -> None:
        raise RuntimeError("counted under callbacks/errors")


class Settler(Callback):
    """What a run-directory writer does: settle, then look at the finished result."""

    priority = -10

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[dict[str, Any]] = []
        self.drafts: list[ResultDraft] = []

    def on_train_result(self, *, result: Any, draft: ResultDraft, **kwargs: Any) -> None:
        assert draft.result is result
        assert result.get("early") != 3.0  # not settled yet: the logger has it, not result
        assert draft.settle() is result
        self.seen.append(
            {
                "early": result["early"],
                "added": result["added"],
                "errors": result["callbacks"]["errors"],
                "checkpoint": result["control"]["checkpoint"],
            }
        )
        self.drafts.append(draft)


def test_settle_brings_in_what_earlier_handlers_did(small_ppo: PPOConfig) -> None:
    settler = Settler()
    config = small_ppo.callbacks([Early, Failing, settler], on_error="log")
    with config.build() as algo:
        result = algo.train()
        second = algo.train()
    # A returned Control is the chain's result: known once the chain is done, so the
    # settler does not see Early's yet, and train()'s result does.
    assert settler.seen[0] == {"early": 3.0, "added": "by hand", "errors": 1, "checkpoint": False}
    assert settler.seen[1]["errors"] == 2
    assert (result["early"], second["early"]) == (3.0, 3.0)  # per-iteration sums
    assert result["callbacks"]["errors"] == 1
    assert result["control"]["checkpoint"] is True


def test_the_draft_closes_when_the_chain_is_done(small_ppo: PPOConfig) -> None:
    settler = Settler()
    with small_ppo.callbacks([Early, settler]).build() as algo:
        result = algo.train()
        (draft,) = settler.drafts
        assert draft.closed
        assert repr(draft) == "<ResultDraft closed, iteration 1>"
        algo.metrics.log_value("late", 1.0)
        before = dict(result)
        assert draft.settle() is result
        assert result == before  # a closed draft changes nothing


def test_handlers_that_name_every_spec_argument_still_work(small_ppo: PPOConfig) -> None:
    """``draft`` is optional (OPTIONAL_LIVE_ARGS): without **kwargs, naming SPEC's is enough."""
    seen: list[str] = []

    def named_all(*, event: Any, algorithm: Any, metrics_logger: Any, result: Any) -> None:
        seen.append("named all of SPEC's")

    def with_draft(*, event: Any, algorithm: Any, metrics_logger: Any, result: Any, draft: Any):
        seen.append(type(draft).__name__)

    config = small_ppo.callbacks(on_train_result=[named_all, with_draft])
    with config.build() as algo:
        algo.train()
    assert seen == ["named all of SPEC's", "ResultDraft"]
