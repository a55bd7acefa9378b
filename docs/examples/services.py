"""Share an object between callbacks through the bus's named services."""

from __future__ import annotations

from typing import Any

from hookbus.kernel import Callback
from hookbus.runners import PPOConfig


class Tracer(Callback):
    """Offer itself as the "tracer" service once the Algorithm is set up."""

    def __init__(self) -> None:
        self.spans: list[int] = []

    def on_algorithm_init(self, *, algorithm: Any, **kwargs: Any) -> None:
        algorithm.bus.services.provide("tracer", self)


class UsesTracer(Callback):
    """Use the tracer if some other callback (or plugin) provides one."""

    def on_train_result(self, *, algorithm: Any, result: dict[str, Any], **kwargs: Any) -> None:
        tracer = algorithm.bus.services.get("tracer", None)
        if tracer is not None:
            tracer.spans.append(result["training_iteration"])


if __name__ == "__main__":
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .training(train_batch_size=500, minibatch_size=100, num_epochs=1)
        .callbacks([Tracer, UsesTracer])
        .debugging(seed=0)
    )
    with config.build() as algo:
        algo.train()
        algo.train()
        print(
            f"services: {list(algo.bus.services)}; traced iterations: "
            f"{algo.bus.services.get('tracer').spans}"
        )
