"""Control results: callbacks ask the training loop to stop or evaluate; the loop does it.

Run: ``python docs/examples/control.py``. The same callbacks work from the command line:
``hookbus train --env CartPole-v1 --callbacks docs/examples/control.py:StopAtReturn``.
"""

from __future__ import annotations

from typing import Any

import anyio

from hookbus.events import TrainResult
from hookbus.kernel import Bus, Callback, Control
from hookbus.runners import PPOConfig


class StopAtReturn(Callback):
    """Ask to stop once the mean episode return reaches ``THRESHOLD``."""

    THRESHOLD = 40.0

    def on_train_result(self, *, result: dict[str, Any], **kwargs: Any) -> Control | None:
        mean = result["env_runners"]["episode_return_mean"]
        if mean >= self.THRESHOLD:
            return Control(stop_training=True, reason=f"return {mean:.1f} >= {self.THRESHOLD}")
        return None  # the common case: nothing asked, nothing to pay


class EvaluateEveryThird(Callback):
    """Ask for an evaluation round every third iteration (an async handler works too)."""

    async def on_train_result(self, *, result: dict[str, Any], **kwargs: Any) -> Control | None:
        return Control(evaluate=True) if result["training_iteration"] % 3 == 0 else None


def train_until_asked() -> None:
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .training(train_batch_size=1000, minibatch_size=128, num_epochs=5, lr=0.001)
        .debugging(seed=0)
        .callbacks([StopAtReturn, EvaluateEveryThird])
    )
    with config.build() as algo:
        for _ in range(30):
            result = algo.train()
            control = result["control"]  # always there; every request False when none
            if control["evaluate"]:
                evaluation = algo.evaluate()
                mean = evaluation["env_runners"]["episode_return_mean"]
                print(f"iteration {result['training_iteration']}: evaluated, return {mean:.1f}")
            if control["stop_training"]:
                who = ", ".join(control["requested_by"]["stop_training"])
                iteration = result["training_iteration"]
                print(f"iteration {iteration}: {who} asked to stop ({control['reason']})")
                break
        else:
            print("30 iterations, nobody asked to stop")


async def combine_on_a_bus() -> None:
    """On a bus of your own, ``publish()`` returns the combined Control (None: nobody asked)."""

    def checkpoint_please(**kwargs: Any) -> Control:
        return Control(checkpoint=True, reason="new best")

    async with Bus(on_train_result=[checkpoint_please, lambda **kw: None]) as bus:
        control = await bus.publish(TrainResult(source="me", seq=0))
        print(control)


if __name__ == "__main__":
    train_until_asked()
    anyio.run(combine_on_a_bus)
