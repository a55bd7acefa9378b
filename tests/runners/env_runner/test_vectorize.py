"""gym_env_vectorize_mode: SYNC, ASYNC and VECTOR_ENTRY_POINT, as RLlib names them."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.classic_control.cartpole import CartPoleVectorEnv

from hookbus.kernel import Bus, ConfigError, Recorder, check_lifecycle, read_recording
from hookbus.runners import EnvRunner, MultiAgentCartPole, PPOConfig

sys.path.insert(0, str(Path(__file__).parents[1]))  # so sub-env processes import the helpers too
import process_helpers
import vector_helpers

MODES = ["SYNC", "ASYNC", "VECTOR_ENTRY_POINT"]


def runner(mode: str, *callbacks: Any, num_envs: int = 3, env: Any = "CartPole-v1") -> EnvRunner:
    config = PPOConfig().environment(env).debugging(seed=1)
    config.env_runners(num_envs_per_env_runner=num_envs, gym_env_vectorize_mode=mode)
    return EnvRunner(config, bus=Bus(list(callbacks)))


# --- the setting ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("SYNC", "SYNC"),
        ("async", "ASYNC"),
        ("Vector_Entry_Point", "VECTOR_ENTRY_POINT"),
        (gym.VectorizeMode.ASYNC, "ASYNC"),
        (gym.VectorizeMode.VECTOR_ENTRY_POINT, "VECTOR_ENTRY_POINT"),
    ],
)
def test_the_setting_takes_rllibs_forms_and_keeps_the_name(given: Any, kept: str) -> None:
    config = PPOConfig().env_runners(gym_env_vectorize_mode=given)
    assert config.gym_env_vectorize_mode == kept
    assert PPOConfig().gym_env_vectorize_mode == "SYNC"


def test_files_and_dicts_set_it_too() -> None:
    config = PPOConfig().update_from_dict({"gym_env_vectorize_mode": "async"})
    assert config.gym_env_vectorize_mode == "ASYNC"


@pytest.mark.parametrize("bad", ["threads", None, 2])
def test_an_unknown_mode_is_one_error_listing_the_modes(bad: Any) -> None:
    with pytest.raises(
        ConfigError,
        match=rf"gym_env_vectorize_mode must be one of 'SYNC', 'ASYNC', "
        rf"'VECTOR_ENTRY_POINT' \(any case\) or a gymnasium.VectorizeMode, got {bad!r}",
    ):
        PPOConfig().env_runners(gym_env_vectorize_mode=bad)


def test_multi_agent_envs_refuse_other_modes_by_name() -> None:
    config = PPOConfig().environment(MultiAgentCartPole, env_config={"num_agents": 2})
    config.multi_agent(policies={"p0"}, policy_mapping_fn=process_helpers.policy_of_agent)
    config.env_runners(gym_env_vectorize_mode="ASYNC")
    with pytest.raises(ConfigError, match="gym_env_vectorize_mode='ASYNC' is not supported"):
        config.build()


# --- the vector envs ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "kind"),
    [
        ("SYNC", gym.vector.SyncVectorEnv),
        ("ASYNC", gym.vector.AsyncVectorEnv),
        ("VECTOR_ENTRY_POINT", CartPoleVectorEnv),
    ],
)
def test_each_mode_builds_its_vector_env(mode: str, kind: type) -> None:
    made = runner(mode)
    try:
        assert isinstance(made.env.unwrapped, kind)
        assert made.num_envs == 3
    finally:
        made.stop()


def test_vector_entry_point_takes_rllibs_creator_form_with_num_envs() -> None:
    made = runner("VECTOR_ENTRY_POINT", env=vector_helpers.cartpole_vector)
    try:
        assert isinstance(made.env.unwrapped, CartPoleVectorEnv)
        assert made.env.unwrapped.num_envs == 3
    finally:
        made.stop()


def test_an_env_without_a_vector_entry_point_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match="'Acrobot-v1' has no vector entry point"):
        runner("VECTOR_ENTRY_POINT", env="Acrobot-v1")


def test_a_creator_not_making_a_vector_env_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"must return a gymnasium.vector.VectorEnv"):
        runner("VECTOR_ENTRY_POINT", env=vector_helpers.Flaky)


def test_a_vector_entry_point_resetting_otherwise_than_next_step_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"autoreset_mode .*SAME_STEP.*NEXT_STEP only"):
        runner("VECTOR_ENTRY_POINT", env=vector_helpers.same_step_vector)


def test_a_vector_entry_point_of_another_size_is_refused() -> None:
    with pytest.raises(ConfigError, match="made 2 sub-envs, not the 3 asked"):
        runner("VECTOR_ENTRY_POINT", env=vector_helpers.two_sub_envs)


# --- episodes and hooks -------------------------------------------------------------------


@pytest.mark.anyio
async def test_async_samples_exactly_what_sync_samples() -> None:
    traces, episodes = [], []
    for mode in ("SYNC", "ASYNC"):
        log = vector_helpers.Returns()
        made = runner(mode, log)
        try:
            sampled = await made.asample(num_timesteps=150, random_actions=True)
            sampled += await made.asample(num_timesteps=150, random_actions=True)
        finally:
            made.stop()
        traces.append(log.trace)
        episodes.append([(e.get_observations(), e.get_rewards()) for e in sampled])
    assert traces[0] == traces[1]
    assert len(episodes[0]) == len(episodes[1]) > 3
    for (obs_a, rew_a), (obs_b, rew_b) in zip(*episodes, strict=True):
        np.testing.assert_array_equal(np.asarray(obs_a), np.asarray(obs_b))
        np.testing.assert_array_equal(np.asarray(rew_a), np.asarray(rew_b))


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_every_mode_keeps_the_hook_contract_with_env_and_env_index(
    mode: str, tmp_path: Path
) -> None:
    seen: list[tuple[Any, int]] = []

    def on_episode_step(*, env: Any, env_index: int, **kwargs: Any) -> None:
        seen.append((env, env_index))

    path = tmp_path / "run.msgpack"
    config = PPOConfig().environment("CartPole-v1").debugging(seed=1)
    config.env_runners(num_envs_per_env_runner=3, gym_env_vectorize_mode=mode)
    async with Bus(Recorder(path), on_episode_step=[on_episode_step]) as bus:
        made = EnvRunner(config, bus=bus)
        try:
            episodes = await made.asample(num_timesteps=300, random_actions=True)
        finally:
            made.stop()
    assert 300 <= sum(map(len, episodes)) < 303
    assert all(env is made.env for env, _ in seen)  # the vector env, in every mode
    assert {i for _, i in seen} == {0, 1, 2}
    summary = check_lifecycle(read_recording(path))
    assert summary.episodes >= 10
    for episode in episodes:  # CartPole pays 1 per step, the reset step is no transition
        assert episode.get_return() == len(episode)


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_a_handler_ending_episodes_early_starts_clean_ones(mode: str) -> None:
    log = vector_helpers.Returns()
    made = runner(mode, vector_helpers.EndsAtFour(), log)
    try:
        episodes = await made.asample(num_episodes=12, random_actions=True)
    finally:
        made.stop()
    done = [e for e in episodes if e.is_done]
    assert len(done) >= 12
    assert all(len(e) == 4 and e.is_truncated for e in done)
    # Each next episode starts from a reset: its first observation is a start state.
    starts = [e.get_observations()[0] for e in done]
    assert all(np.all(np.abs(obs) <= 0.05) for obs in starts)
    ends = [(i, n) for kind, i, n in log.trace if kind == "end"]
    assert all(n == 4 for _, n in ends)


# --- running code on the sub-envs -----------------------------------------------------------


def test_foreach_env_runs_where_each_sub_env_lives() -> None:
    sync, async_, entry = runner("SYNC"), runner("ASYNC"), runner("VECTOR_ENTRY_POINT")
    try:
        assert sync.foreach_env(vector_helpers.pid) == [os.getpid()] * 3
        pids = async_.foreach_env(vector_helpers.pid)
        assert len(set(pids)) == 3
        assert os.getpid() not in pids
        assert async_.foreach_env(lambda env: type(env).__name__) == ["CartPoleEnv"] * 3
        assert async_.foreach_env_with_context(vector_helpers.vector_index) == [
            ("CartPoleEnv", i) for i in range(3)
        ]
        assert entry.foreach_env(lambda env: type(env).__name__) == ["CartPoleVectorEnv"]
        assert entry.foreach_env_with_context(vector_helpers.vector_index) == [
            ("CartPoleVectorEnv", 0)
        ]
    finally:
        for made in (sync, async_, entry):
            made.stop()


@pytest.mark.anyio
async def test_an_error_in_a_sub_env_process_reaches_the_caller_and_spares_the_env() -> None:
    made = runner("ASYNC")
    try:
        with pytest.raises(ValueError, match="boom in CartPoleEnv"):
            made.foreach_env(vector_helpers.boom)
        episodes = await made.asample(num_timesteps=30, random_actions=True)
        assert 30 <= sum(map(len, episodes)) < 33
    finally:
        made.stop()


@pytest.mark.parametrize("mode", ["SYNC", "ASYNC"])
def test_env_task_fn_sets_tasks_in_every_sub_env(small_ppo: PPOConfig, mode: str) -> None:
    config = small_ppo.environment(process_helpers.Levels, env_task_fn=process_helpers.next_level)
    config.env_runners(num_envs_per_env_runner=2, gym_env_vectorize_mode=mode)
    with config.build() as algo:
        algo.train()
        algo.train()
        assert algo.env_runner.foreach_env(lambda env: env.get_task()) == [2, 2]


def test_env_task_fn_has_no_sub_envs_to_set_under_vector_entry_point(
    small_ppo: PPOConfig,
) -> None:
    config = small_ppo.environment("CartPole-v1", env_task_fn=process_helpers.next_level)
    config.env_runners(gym_env_vectorize_mode="VECTOR_ENTRY_POINT")
    with pytest.raises(ConfigError, match=r"env_task_fn .*VECTOR_ENTRY_POINT"):
        config.build()


# --- failing sub-envs -------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["ASYNC", "VECTOR_ENTRY_POINT"])
async def test_a_failing_env_fails_the_runner_marked_as_the_envs(mode: str) -> None:
    env = vector_helpers.Flaky if mode == "ASYNC" else vector_helpers.flaky_vector
    vector_helpers.FlakyVector.made = 0
    made = runner(mode, env=env, num_envs=2)
    try:
        with pytest.raises(RuntimeError, match="flaky") as caught:
            await made.asample(num_timesteps=40, random_actions=True)
        assert "hookbus: raised by the env's step()" in caught.value.__notes__
    finally:
        made.stop()


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["ASYNC", "VECTOR_ENTRY_POINT"])
async def test_restart_failed_sub_environments_restarts_in_each_mode(mode: str) -> None:
    env = vector_helpers.Flaky if mode == "ASYNC" else vector_helpers.flaky_vector
    vector_helpers.FlakyVector.made = 0
    config = PPOConfig().environment(env).debugging(seed=1)
    config.env_runners(num_envs_per_env_runner=2, gym_env_vectorize_mode=mode)
    config.fault_tolerance(restart_failed_sub_environments=True)
    made = EnvRunner(config, bus=Bus())
    try:
        episodes = await made.asample(num_timesteps=60, random_actions=True)
    finally:
        made.stop()
    assert 60 <= sum(map(len, episodes)) < 62
    failed = [e for e in episodes if "env_step_failure" in e.get_infos()[-1]]
    assert failed
    assert all(e.is_truncated and e.get_rewards()[-1] == 0.0 for e in failed)
    # ASYNC restarts the one sub-env that failed (sub-env 0); a vector entry point is one
    # object: all of its sub-envs start anew.
    assert [e.env_index for e in failed] == ([0] if mode == "ASYNC" else [0, 1])
    if mode == "VECTOR_ENTRY_POINT":
        assert vector_helpers.FlakyVector.made == 2


@pytest.mark.anyio
async def test_the_env_argument_reads_a_vector_entry_points_own_attributes() -> None:
    states: list[Any] = []

    def on_episode_start(*, env: Any, env_index: int, **kwargs: Any) -> None:
        states.append(np.array(env.state[:, env_index]))  # CartPoleVectorEnv's own array
        assert isinstance(env.unwrapped, CartPoleVectorEnv)

    config = PPOConfig().environment("CartPole-v1").debugging(seed=1)
    config.env_runners(num_envs_per_env_runner=3, gym_env_vectorize_mode="VECTOR_ENTRY_POINT")
    made = EnvRunner(config, bus=Bus(on_episode_start=[on_episode_start]))
    try:
        episodes = await made.asample(num_timesteps=30, random_actions=True)
    finally:
        made.stop()
    assert len(states) == 3
    first = {e.env_index: e.get_observations()[0] for e in episodes if e.t_started == 0}
    for i, state in enumerate(states):
        np.testing.assert_allclose(first[i], state, rtol=1e-6)


@pytest.mark.parametrize(
    ("mode", "hint"),
    [
        ("ASYNC", r"each sub-env lives in a process of its own; reach them with env\.call"),
        ("VECTOR_ENTRY_POINT", r"steps its sub-envs as arrays and has no sub-env objects"),
    ],
)
def test_env_envs_outside_sync_says_where_the_sub_envs_are(mode: str, hint: str) -> None:
    # RLlib's callbacks reach sub-env i as env.envs[i].unwrapped, which only SYNC has.
    made = runner(mode)
    try:
        with pytest.raises(AttributeError) as raised:
            made.env.envs  # noqa: B018
        said = "\n".join([str(raised.value), *getattr(raised.value, "__notes__", ())])
        assert re.search(hint, said), said
        assert "'SYNC' for env.envs[i]" in said  # and how to have them
        assert not hasattr(made.env, "envs")
        with pytest.raises(AttributeError, match=r"object has no attribute 'no_such_thing'"):
            made.env.no_such_thing  # noqa: B018
    finally:
        made.stop()
    synced = runner("SYNC")
    try:
        assert synced.env.envs[0].unwrapped is not None
    finally:
        synced.stop()
