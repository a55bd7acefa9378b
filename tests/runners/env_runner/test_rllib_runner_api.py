"""RLlib's sync EnvRunner API, called where RLlib's users call it, on every backend.

RLlib's ``EnvRunner.sample()``, ``get_metrics()``, ``get_state()``, ``make_env()``,
``ping()`` are sync (rllib/env/env_runner.py, single_agent_env_runner.py); its users call
them in the functions they send through ``foreach_env_runner`` (rllib/examples/evaluation/
custom_evaluation.py). ``foreach_env_runner``'s keywords are those of RLlib's
``EnvRunnerGroup`` (rllib/env/env_runner_group.py).
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from hookbus.kernel import Bus, ConfigError
from hookbus.runners import (
    AlgorithmStateError,
    EnvContext,
    EnvRunner,
    EnvRunnerGroup,
    PPOConfig,
    SampleRequest,
    make_multi_agent,
)

sys.path.insert(0, str(Path(__file__).parents[1]))  # so worker processes import the helpers too
import process_helpers

BACKENDS = ["inline", "process", "ray"]


def with_backend(config: PPOConfig, backend: str, request: pytest.FixtureRequest) -> PPOConfig:
    if backend == "ray":
        request.getfixturevalue("ray_cluster")
    return config.env_runners(num_env_runners=2, backend=backend, num_cpus_per_env_runner=0.5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_foreach_functions_call_the_sync_runner_api_on_every_backend(
    small_ppo: PPOConfig, backend: str, request: pytest.FixtureRequest
) -> None:
    with with_backend(small_ppo, backend, request).build() as algo:
        group = algo.env_runner_group
        results = group.foreach_env_runner(func=process_helpers.sample_and_metrics)
        # A lambda travels to worker processes too (cloudpickle, as Ray).
        states = group.foreach_env_runner(lambda w: w.get_state()["rl_module"] is not None)
    assert results == [(i, 2, "pong", 2, True) for i in range(3)]
    assert states == [True, True, True]


@pytest.mark.anyio
@pytest.mark.parametrize("backend", ["inline", "process"])
async def test_the_async_twin_runs_sync_functions_off_the_loop(
    small_ppo: PPOConfig, backend: str
) -> None:
    config = small_ppo.env_runners(num_env_runners=1, backend=backend)
    async with config.build() as algo:
        group = algo.env_runner_group
        results = await group.aforeach_env_runner(process_helpers.sample_and_metrics)
        episodes = await algo.env_runner.asample(num_episodes=1, random_actions=True)
        # The sync form on the loop's own thread would deadlock: one error naming the twin.
        with pytest.raises(AlgorithmStateError, match=r"await env_runner\.asample\(\.\.\.\)"):
            algo.env_runner.sample(num_timesteps=1)
    assert [r[:3] for r in results] == [(0, 2, "pong"), (1, 2, "pong")]
    assert episodes[-1].is_done


def test_a_sync_per_step_handler_calling_sample_gets_the_twin_named(
    small_ppo: PPOConfig,
) -> None:
    config = small_ppo.callbacks(on_episode_step=process_helpers.sample_on_the_loop)
    with config.build() as algo:
        with pytest.raises(AlgorithmStateError, match=r"await env_runner\.asample\(\.\.\.\)"):
            algo.train()


def test_get_state_set_state_make_env_and_ping_on_a_runner_of_its_own() -> None:
    config = PPOConfig().environment("CartPole-v1", env_config={}).debugging(seed=1)
    runner = EnvRunner(config, bus=Bus(), worker_index=3)
    assert (runner.worker_index, runner.num_workers, runner.ping()) == (3, 0, "pong")
    assert runner.env is not None
    assert runner.metrics is not None
    assert runner.config is config
    runner.sample(num_timesteps=30, random_actions=True)  # sync, as RLlib's
    state = runner.get_state()
    assert state == {"rl_module": None, "num_env_steps_sampled_lifetime": 30}
    runner.set_state({"num_env_steps_sampled_lifetime": 100})
    assert runner.get_state()["num_env_steps_sampled_lifetime"] == 100
    with pytest.raises(KeyError, match=r"unknown keys \['weights'\].*'rl_module'"):
        runner.set_state({"weights": {}})
    old = runner.env
    config.env_config["max_episode_steps"] = 7  # RLlib: change config.env_config, make_env()
    runner.make_env()
    assert runner.env is not old
    assert runner.env_context["max_episode_steps"] == 7
    episodes = runner.sample(num_episodes=1, random_actions=True)
    assert episodes[-1].is_done
    runner.stop()


@pytest.mark.parametrize("backend", ["inline", "process"])
def test_rllibs_keywords_pick_runners_and_pass_kwargs(
    small_ppo: PPOConfig, backend: str, request: pytest.FixtureRequest
) -> None:
    with with_backend(small_ppo, backend, request).build() as algo:
        group = algo.env_runner_group
        picked = group.foreach_env_runner(
            lambda w, offset: w.worker_index + offset,
            local_env_runner=False,
            remote_worker_ids=[2],
            kwargs={"offset": 10},
        )
        by_name = group.foreach_env_runner("ping", local_env_runner=False, timeout_seconds=60)
        one_each = group.foreach_env_runner(
            [lambda w: ("a", w.worker_index), lambda w: ("b", w.worker_index)],
            local_env_runner=False,
        )
        everyone = group.foreach_env_runner(process_helpers.runner_index, healthy_only=False)
    assert picked == [12]
    assert by_name == ["pong", "pong"]
    assert one_each == [("a", 1), ("b", 2)]
    assert everyone == [0, 1, 2]


def test_the_sync_and_async_foreach_env_runner_take_the_same_keywords() -> None:
    # Each twin spells RLlib's keywords out, so that help() and editors show them: this
    # keeps the two lists from drifting apart.
    sync = inspect.signature(EnvRunnerGroup.foreach_env_runner)
    twin = inspect.signature(EnvRunnerGroup.aforeach_env_runner)
    assert sync.parameters == twin.parameters
    assert "timeout_seconds" in sync.parameters


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"return_obj_refs": True}, r"return_obj_refs=True.*results themselves"),
        ({"timeout_seconds": 0.0}, r"timeout_seconds=0\.0.*fire-and-forget"),
        ({"remote_worker_ids": [7]}, r"no remote runner has worker index \[7\].*\[1, 2\]"),
        ({"healthy_only": False, "mark_healthy": True}, r"restore_env_runners"),
        ({"func": [print]}, r"one function per remote runner.*local_env_runner=False"),
        ({"func": [print], "local_env_runner": False}, r"got 1 functions for 2 remote"),
        ({"func": 3}, r"func=3.*a function of the runner, a method name"),
    ],
)
def test_what_foreach_env_runner_refuses_is_named(
    small_ppo: PPOConfig, keywords: dict[str, Any], message: str
) -> None:
    keywords = {"func": process_helpers.runner_index, **keywords}
    with small_ppo.env_runners(num_env_runners=2).build() as algo:
        with pytest.raises(ConfigError, match=message):
            algo.env_runner_group.foreach_env_runner(**keywords)


def test_sync_handlers_of_every_algorithm_hook_reach_worker_processes(
    small_ppo: PPOConfig, tmp_path: Path
) -> None:
    config = small_ppo.env_runners(num_env_runners=2, backend="process")
    config = config.callbacks(process_helpers.PingsFromEveryAlgorithmHook)
    with config.evaluation(evaluation_interval=1, evaluation_duration=1).build() as algo:
        algo.train()
        algo.save_to_path(tmp_path)
        algo.restore_from_path(tmp_path)
        (handler,) = [
            cb
            for cb in algo.bus.callbacks
            if isinstance(cb, process_helpers.PingsFromEveryAlgorithmHook)
        ]
    hooks = ["on_algorithm_init", "on_train_result", "on_evaluate_start", "on_evaluate_end"]
    assert handler.pongs == {hook: ["pong"] * 3 for hook in [*hooks, "on_checkpoint_loaded"]}


def test_complete_episodes_sample_returns_whole_episodes_up_to_the_train_batch() -> None:
    """RLlib's SingleAgentEnvRunner.sample() with no budget and complete_episodes."""
    ends: list[int] = []
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(batch_mode="complete_episodes", num_envs_per_env_runner=2)
        .training(train_batch_size=120)
        .debugging(seed=0)
    )
    bus = Bus(on_sample_end=lambda *, samples: ends.append(len(samples)))
    episodes = EnvRunner(config, bus=bus).sample(random_actions=True)
    assert sum(map(len, episodes)) >= 120
    assert all(episode.is_done for episode in episodes)
    assert ends == [len(episodes)]  # one call, one on_sample_end
    with pytest.raises(ConfigError, match="complete_episodes_to alone"):
        SampleRequest(complete_episodes_to=10, num_timesteps=5)


def test_make_multi_agent_hands_each_creator_the_env_context() -> None:
    """As RLlib's make_multi_agent: the creator gets the EnvContext (worker_index works)."""
    seen: list[tuple[str, int, bool, int]] = []

    def creator(ctx: Any) -> Any:
        seen.append((type(ctx).__name__, ctx.worker_index, "num_agents" in ctx, ctx["x"]))
        return gym.make("CartPole-v1")

    context = EnvContext({"num_agents": 2, "x": 1}, worker_index=3)
    make_multi_agent(creator)(context)
    assert seen == [("EnvContext", 3, False, 1)] * 2
    assert context["num_agents"] == 2  # the caller's context is left as it was
    make_multi_agent(creator)({"x": 5})  # a plain dict still works
    assert seen[-1] == ("EnvContext", 0, False, 5)
