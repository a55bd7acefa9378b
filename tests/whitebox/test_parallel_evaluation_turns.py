"""In-process evaluation runners take turns with a parallel training step.

With ``evaluation_parallel_to_training`` and ``evaluation_duration="auto"``, inline
evaluation runners sample on the event loop's thread while the learner updates in a worker
thread; both need the GIL. Sampling without pause starved the learner (an iteration took
20-340 s instead of about one). The evaluation now samples one unit at a time and, while
the training step runs, pauses after each unit for as long as the unit took. This checks
the turns from the recorded times of the units (no speed is asserted).
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from hookbus.runners import PPOConfig
from hookbus.runners.algorithm import _evaluation
from hookbus.runners.algorithms.ppo._algorithm import EpisodePPOLearner


def test_units_alternate_with_pauses_while_training_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    units: list[tuple[float, float]] = []
    updates: list[tuple[float, float]] = []
    request = _evaluation.Evaluation._request
    update = EpisodePPOLearner.update

    async def timed_request(self: Any, *args: Any, **kwargs: Any) -> Any:
        began = time.monotonic()
        outcome = await request(self, *args, **kwargs)
        units.append((began, time.monotonic()))
        return outcome

    def timed_update(self: Any, *args: Any, **kwargs: Any) -> Any:
        began = time.monotonic()
        try:
            return update(self, *args, **kwargs)
        finally:
            updates.append((began, time.monotonic()))

    monkeypatch.setattr(_evaluation.Evaluation, "_request", timed_request)
    monkeypatch.setattr(EpisodePPOLearner, "update", timed_update)
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .training(train_batch_size=2000, minibatch_size=100, num_epochs=5)
        .evaluation(
            evaluation_parallel_to_training=True,
            evaluation_num_env_runners=2,
            evaluation_interval=1,
            evaluation_duration="auto",
        )
        .debugging(seed=0)
    )
    with config.build() as algo:
        for _ in range(3):
            result = algo.train()
            assert result["evaluation"]["env_runners"]["num_env_steps_sampled"] > 0
    during = [
        (i, began, ended)
        for i, (began, ended) in enumerate(units[:-1])
        if any(start <= ended <= stop for start, stop in updates)
    ]
    assert during, (units, updates)  # some units ran while the learner updated
    for i, began, ended in during:
        # The next unit (this round's, or the next round's) starts after a pause at least
        # as long as this unit took: the learner's turn.
        assert units[i + 1][0] - ended >= 0.9 * (ended - began), (i, units, updates)
