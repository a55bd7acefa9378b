"""Callbacks for the CLI's Control tests: each asks the loop for something at iteration 2."""

from __future__ import annotations

from typing import Any

from hookbus.kernel import Callback, Control


class StopAtSecond(Callback):
    def on_train_result(self, *, result: dict[str, Any], **kwargs: Any) -> Control | None:
        if result["training_iteration"] == 2:
            return Control(stop_training=True, reason="enough")
        return None


class CheckpointAndEvaluateAtSecond(Callback):
    async def on_train_result(self, *, result: dict[str, Any], **kwargs: Any) -> Control | None:
        if result["training_iteration"] == 2:
            return Control(checkpoint=True, evaluate=True)
        return None
