"""Publish your own events onto a bus with a Publisher: numbered, built only when wanted."""

from __future__ import annotations

from typing import Any

import anyio

from hookbus.events import EvaluateEnd, TrainResult
from hookbus.kernel import Bus, Publisher


async def main() -> None:
    seen: list[tuple[str, int, float]] = []

    def on_train_result(*, event: TrainResult, result: dict[str, Any], **kwargs: Any) -> None:
        seen.append((event.source, event.seq, result["score"]))

    async with Bus(on_train_result=on_train_result) as bus:
        # One Publisher per source; `algorithm=` goes to every hook that takes it.
        publisher = Publisher(bus, "my_trainer", algorithm=None)
        for step in range(3):
            result = {"score": step * 1.5}
            await publisher.publish(
                TrainResult, {"result": result}, training_iteration=step, result=result
            )
        # Nobody listens to on_evaluate_end: nothing is built, no seq is used.
        skipped = await publisher.publish(EvaluateEnd, training_iteration=3)
    assert skipped is None
    assert publisher.seq == 3
    for source, seq, score in seen:
        print(f"{source} #{seq}: score {score}")


if __name__ == "__main__":
    anyio.run(main)
