"""RLlib's asynchronous calls on the group: ``foreach_env_runner_async`` sends, and
``fetch_ready_async_reqs`` collects later (rllib/env/env_runner_group.py; the in-flight rule
is that of rllib/utils/actor_manager.py: a runner with ``max_requests_in_flight_per_env_runner``
requests not fetched yet gets no new one)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from hookbus.kernel import ConfigError
from hookbus.runners import PPOConfig

BACKENDS = ["inline", "process", "ray"]


def two_runners(config: PPOConfig, backend: str = "process", **settings: Any) -> PPOConfig:
    return config.env_runners(
        num_env_runners=2, backend=backend, num_cpus_per_env_runner=0.5, **settings
    )


def sampled(worker: Any) -> tuple[int, bool]:
    episodes = worker.sample(num_episodes=1, random_actions=True)
    return worker.worker_index, episodes[-1].is_done


@pytest.mark.parametrize("backend", BACKENDS)
def test_calls_start_at_once_and_their_results_are_fetched_later(
    small_ppo: PPOConfig, backend: str, request: pytest.FixtureRequest
) -> None:
    if backend == "ray":
        request.getfixturevalue("ray_cluster")
    with two_runners(small_ppo, backend).build() as algo:
        group = algo.env_runner_group
        sent = group.foreach_env_runner_async(sampled)
        results = group.fetch_ready_async_reqs(timeout_seconds=None)
        again = group.fetch_ready_async_reqs()
        # A lambda and keyword arguments travel too, as to foreach_env_runner.
        group.foreach_env_runner_async(lambda w, add: w.worker_index + add, kwargs={"add": 10})
        added = group.fetch_ready_async_reqs(timeout_seconds=None)
    assert sent == 2  # the remote runners only, as RLlib's
    assert sorted(results) == [(1, (1, True)), (2, (2, True))]
    assert again == []
    assert sorted(added) == [(1, 11), (2, 12)]


def test_a_busy_runner_gets_no_new_call_until_its_reply_is_fetched(small_ppo: PPOConfig) -> None:
    with two_runners(small_ppo).build() as algo:
        group = algo.env_runner_group
        assert group.foreach_env_runner_async("ping") == 2
        assert group.foreach_env_runner_async("ping") == 0  # one each by default (RLlib's)
        assert group.num_in_flight_async_reqs() == 2
        assert sorted(group.fetch_ready_async_reqs(timeout_seconds=None)) == [
            (1, "pong"),
            (2, "pong"),
        ]
        assert group.num_in_flight_async_reqs() == 0
        assert group.foreach_env_runner_async("ping", remote_worker_ids=[2]) == 1
        assert group.fetch_ready_async_reqs(timeout_seconds=None) == [(2, "pong")]


def test_tags_pick_what_is_fetched(small_ppo: PPOConfig) -> None:
    config = two_runners(small_ppo, max_requests_in_flight_per_env_runner=2)
    with config.build() as algo:
        group = algo.env_runner_group
        assert group.foreach_env_runner_async("ping", "a") == 2
        assert group.foreach_env_runner_async(lambda w: w.worker_index, "b") == 2
        assert group.foreach_env_runner_async("ping", "c") == 0  # two in flight each
        b = group.fetch_ready_async_reqs(tags="b", timeout_seconds=None)
        assert group.num_in_flight_async_reqs("a") == 2
        assert group.num_in_flight_async_reqs("b") == 0
        rest = group.fetch_ready_async_reqs(tags=["a", "b"], timeout_seconds=None)
    assert sorted(b) == [(1, 1), (2, 2)]
    assert sorted(rest) == [(1, "pong"), (2, "pong")]


def test_timeout_zero_returns_what_is_there_now(small_ppo: PPOConfig) -> None:
    gate = threading.Event()  # in-process runners: the calls wait for it

    def wait_for_gate(worker: Any) -> int:
        gate.wait(30)
        return int(worker.worker_index)

    with two_runners(small_ppo, "inline").build() as algo:
        group = algo.env_runner_group
        assert group.foreach_env_runner_async(wait_for_gate) == 2
        assert group.fetch_ready_async_reqs() == []  # RLlib's default: 0.0 s
        assert group.fetch_ready_async_reqs(timeout_seconds=0.05) == []
        gate.set()
        assert sorted(group.fetch_ready_async_reqs(timeout_seconds=None)) == [(1, 1), (2, 2)]


def test_an_error_in_the_function_is_raised_when_fetched(small_ppo: PPOConfig) -> None:
    def fail(worker: Any) -> None:
        raise ValueError(f"no luck on runner {worker.worker_index}")

    with two_runners(small_ppo).build() as algo:
        group = algo.env_runner_group
        group.foreach_env_runner_async(fail)
        with pytest.raises(ValueError, match="no luck on runner"):
            group.fetch_ready_async_reqs(timeout_seconds=None)
        assert group.num_in_flight_async_reqs() == 0  # the replies were taken all the same
        assert group.foreach_env_runner_async("ping") == 2


def test_without_remote_runners_nothing_is_sent(small_ppo: PPOConfig) -> None:
    with small_ppo.build() as algo:
        group = algo.env_runner_group
        assert group.foreach_env_runner_async("ping") == 0
        assert group.fetch_ready_async_reqs(timeout_seconds=None) == []


def test_bad_arguments_are_one_clear_error(small_ppo: PPOConfig) -> None:
    with two_runners(small_ppo).build() as algo:
        group = algo.env_runner_group
        with pytest.raises(ConfigError, match=r"timeout_seconds=-1\): give seconds >= 0"):
            group.fetch_ready_async_reqs(timeout_seconds=-1)
        with pytest.raises(ConfigError, match="return_obj_refs=True"):
            group.fetch_ready_async_reqs(return_obj_refs=True)
        with pytest.raises(ConfigError, match=r"no remote runner has worker index \[7\]"):
            group.foreach_env_runner_async("ping", remote_worker_ids=[7])
    with pytest.raises(ConfigError, match="max_requests_in_flight_per_env_runner"):
        small_ppo.env_runners(max_requests_in_flight_per_env_runner=0).validate()


@pytest.mark.anyio
async def test_inside_a_loop_the_error_names_the_async_way(small_ppo: PPOConfig) -> None:
    async with two_runners(small_ppo, "inline").build() as algo:
        group = algo.env_runner_group
        with pytest.raises(ConfigError, match=r"aforeach_env_runner\(func\) in a task group"):
            group.foreach_env_runner_async("ping")
        assert await group.aforeach_env_runner("ping", local_env_runner=False) == ["pong"] * 2


def test_a_handler_on_the_loop_thread_may_fetch_but_not_wait(small_ppo: PPOConfig) -> None:
    algos: list[Any] = []

    def on_sample_end(**kwargs: Any) -> None:  # runs on the loop's thread (in-process runner)
        group = algos[0].env_runner_group
        assert group.fetch_ready_async_reqs() == []
        group.fetch_ready_async_reqs(timeout_seconds=1.0)

    config = small_ppo.callbacks(on_sample_end=on_sample_end)
    with config.build() as algo:
        algos.append(algo)
        with pytest.raises(ConfigError, match=r"pass timeout_seconds=0\.0"):
            algo.train()
