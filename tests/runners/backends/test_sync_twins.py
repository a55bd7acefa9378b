"""The group's sync foreach_* (RLlib's names) from scripts and sync callbacks, both backends."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hookbus.runners import AlgorithmStateError, PPOConfig

sys.path.insert(0, str(Path(__file__).parents[1]))  # so worker processes import the helpers too
import process_helpers

BACKENDS = ["inline", "process"]


def two_runners(config: PPOConfig, backend: str) -> PPOConfig:
    return config.env_runners(num_env_runners=2, num_envs_per_env_runner=2, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_foreach_env_from_a_script_returns_every_runners_results(
    small_ppo: PPOConfig, backend: str
) -> None:
    with two_runners(small_ppo, backend).build() as algo:
        group = algo.env_runner_group
        names = group.foreach_env(process_helpers.sub_env_name)
        indices = group.foreach_env_runner(process_helpers.runner_index)
        remote_only = group.foreach_env_runner(process_helpers.runner_index, local_env_runner=False)
    assert names == [["CartPoleEnv", "CartPoleEnv"]] * 3  # the local runner, then 1 and 2
    assert indices == [0, 1, 2]
    assert remote_only == [1, 2]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_sync_on_train_result_handler_sets_tasks_in_every_runner(
    small_ppo: PPOConfig, backend: str
) -> None:
    config = two_runners(small_ppo, backend).environment(process_helpers.Levels)
    config = config.callbacks(process_helpers.SetsTasksEachIteration)
    with config.build() as algo:
        algo.train()
        algo.train()
        (handler,) = [
            cb
            for cb in algo.bus.callbacks
            if isinstance(cb, process_helpers.SetsTasksEachIteration)
        ]
        # The tasks really are set where the envs live (the workers, for "process").
        assert algo.env_runner_group.foreach_env(process_helpers.get_task) == [[3, 3]] * 3
    assert handler.seen == [[[2, 2]] * 3, [[3, 3]] * 3]


@pytest.mark.anyio
async def test_async_code_awaits_the_async_twins(small_ppo: PPOConfig) -> None:
    async with two_runners(small_ppo, "process").build() as algo:
        group = algo.env_runner_group
        assert await group.aforeach_env_runner(process_helpers.runner_index) == [0, 1, 2]
        names = await group.aforeach_env(process_helpers.sub_env_name)
        assert len(names) == 3
        # The sync form would block this loop while workers answer: an error naming the twin.
        with pytest.raises(AlgorithmStateError, match=r"await env_runner_group\.aforeach_env"):
            group.foreach_env(process_helpers.sub_env_name)


@pytest.mark.anyio
async def test_in_process_runners_serve_the_sync_form_even_on_the_loop(
    small_ppo: PPOConfig,
) -> None:
    async with two_runners(small_ppo, "inline").build() as algo:
        assert algo.env_runner_group.foreach_env_runner(process_helpers.runner_index) == [0, 1, 2]


def test_a_sync_on_evaluate_start_handler_reaches_worker_processes(
    small_ppo: PPOConfig,
) -> None:
    """Sync handlers of Algorithm-side hooks run in a worker thread: no deadlock, no error."""
    config = small_ppo.env_runners(num_env_runners=1, backend="process")
    with config.callbacks(
        on_evaluate_start=process_helpers.foreach_env_in_the_loop
    ).build() as algo:
        process_helpers.SEEN_BY_HANDLER.clear()
        algo.evaluate()
        assert process_helpers.SEEN_BY_HANDLER == [["CartPoleEnv"]] * 2  # local, then remote
        assert algo.train()["training_iteration"] == 1


async def _awaits_nothing(**kwargs: object) -> None:
    """An async handler: with it, the chain is async and mixes sync and async handlers."""


@pytest.mark.parametrize("hook", ["on_train_result", "on_evaluate_start"])
def test_a_sync_handler_beside_an_async_one_reaches_worker_processes(
    small_ppo: PPOConfig, hook: str
) -> None:
    """In a chain that also holds an ``async def`` handler, a sync handler of an
    Algorithm-side hook still runs in a worker thread and may call the blocking facades."""
    config = small_ppo.env_runners(num_env_runners=1, backend="process")
    handlers = [_awaits_nothing, process_helpers.foreach_env_in_the_loop, _awaits_nothing]
    with config.callbacks(**{hook: handlers}).build() as algo:
        process_helpers.SEEN_BY_HANDLER.clear()
        algo.train() if hook == "on_train_result" else algo.evaluate()
        assert process_helpers.SEEN_BY_HANDLER == [["CartPoleEnv"]] * 2  # local, then remote
