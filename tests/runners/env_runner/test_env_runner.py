"""EnvRunner: hook order, gap-free sequences, episode boundaries under autoreset, envs."""

from __future__ import annotations

import functools
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import anyio
import gymnasium as gym
import numpy as np
import pytest

from hookbus.events import BaseEvent, EpisodeEnd, EpisodeStep
from hookbus.kernel import Bus, Callback, ConfigError
from hookbus.runners import EnvRunner, Episode, PPOConfig

sys.path.insert(0, str(Path(__file__).parents[1]))
from process_helpers import EpisodeAndSampleCounts

pytestmark = pytest.mark.anyio

EPISODE_HOOKS = (
    "on_episode_created",
    "on_episode_start",
    "on_episode_step",
    "on_episode_end",
    "on_postprocess_trajectory",
)


class HookLog(Callback):
    """Record (hook, env_index, episode id) for every EnvRunner hook."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, Any]] = []
        self.events: list[BaseEvent] = []

    def _log(self, hook: str, kwargs: dict[str, Any]) -> None:
        episode = kwargs.get("episode")
        self.calls.append(
            (hook, kwargs.get("env_index"), episode.id_ if episode is not None else None)
        )
        self.events.append(kwargs["event"])

    def on_environment_created(self, **kwargs: Any) -> None:
        self._log("on_environment_created", kwargs)

    def on_episode_created(self, **kwargs: Any) -> None:
        self._log("on_episode_created", kwargs)

    def on_episode_start(self, **kwargs: Any) -> None:
        self._log("on_episode_start", kwargs)

    def on_episode_step(self, **kwargs: Any) -> None:
        self._log("on_episode_step", kwargs)

    def on_episode_end(self, **kwargs: Any) -> None:
        self._log("on_episode_end", kwargs)

    def on_postprocess_trajectory(self, **kwargs: Any) -> None:
        self._log("on_postprocess_trajectory", kwargs)

    def on_sample_end(self, **kwargs: Any) -> None:
        self._log("on_sample_end", kwargs)


def make_runner(num_envs: int = 3, **env: Any) -> tuple[EnvRunner, HookLog]:
    log = HookLog()
    config = PPOConfig().environment(env.pop("env", "CartPole-v1"), **env)
    config.env_runners(num_envs_per_env_runner=num_envs).debugging(seed=1)
    return EnvRunner(config, bus=Bus(log)), log


async def test_hooks_follow_each_episode_in_order_per_sub_env() -> None:
    runner, log = make_runner()
    await runner.asample(num_timesteps=300, random_actions=True)
    assert log.calls[0][0] == "on_environment_created"
    assert log.calls[-1][0] == "on_sample_end"
    per_episode: dict[str, list[str]] = defaultdict(list)
    for hook, env_index, episode_id in log.calls[1:-1]:
        assert hook in EPISODE_HOOKS
        assert env_index is not None or hook == "on_postprocess_trajectory"
        per_episode[episode_id].append(hook)
    finished = 0
    for hooks in per_episode.values():
        assert hooks[0] == "on_episode_created"
        if len(hooks) > 1:
            assert hooks[1] == "on_episode_start"
            steps = hooks[2:]
            if "on_episode_end" in steps:
                finished += 1
                # The final step fires on_episode_step too, just before on_episode_end.
                assert steps[-3:] == [
                    "on_episode_step",
                    "on_episode_end",
                    "on_postprocess_trajectory",
                ]
                steps = steps[:-2]
            assert set(steps) <= {"on_episode_step"}
    assert finished >= 5


SAMPLINGS = [
    pytest.param({"num_timesteps": 300}, id="timesteps"),
    pytest.param({"num_episodes": 7}, id="episodes"),
    pytest.param({"num_timesteps": 101, "exact": True}, id="timesteps-exact"),
    pytest.param({"num_episodes": 3, "exact": True}, id="episodes-exact"),
    pytest.param({"num_timesteps": 50, "force_reset": True}, id="force-reset"),
]


@pytest.mark.parametrize("how", SAMPLINGS)
async def test_on_episode_step_fires_once_per_env_step_the_last_one_included(
    how: dict[str, Any],
) -> None:
    counts = EpisodeAndSampleCounts()  # checks temporary data and lengths at every end
    config = PPOConfig().environment("CartPole-v1").env_runners(num_envs_per_env_runner=3)
    runner = EnvRunner(config.debugging(seed=2), bus=Bus(counts))
    chunks: list[Episode] = []
    for _ in range(4):
        chunks += await runner.asample(random_actions=True, **how)
    assert counts.counts["sample"] == 4
    # The sum of on_episode_step calls is the number of env steps sampled.
    assert counts.counts["step"] == sum(map(len, chunks))
    assert counts.counts["end"] == sum(chunk.is_done for chunk in chunks) > 0
    if how.get("exact") and "num_timesteps" in how:
        assert counts.counts["step"] == 4 * 101


async def test_the_last_steps_event_says_how_the_episode_ended() -> None:
    runner, log = make_runner(num_envs=2)
    await runner.asample(num_episodes=6, random_actions=True)
    last_step: dict[str, EpisodeStep] = {}
    ends = 0
    for event in log.events:
        if isinstance(event, EpisodeStep):
            assert event.episode_id not in last_step or not (
                last_step[event.episode_id].terminated or last_step[event.episode_id].truncated
            ), "no step after the one that ended the episode"
            last_step[event.episode_id] = event
        elif isinstance(event, EpisodeEnd):
            ends += 1
            step = last_step[event.episode_id]
            assert step.seq == event.seq - 1  # the end comes right after the last step
            assert (step.terminated, step.truncated) == (event.terminated, event.truncated)
            assert step.terminated or step.truncated
    assert ends >= 6


async def test_seq_is_gap_free_per_source_across_samples() -> None:
    runner, log = make_runner()
    await runner.asample(num_timesteps=100, random_actions=True)
    await runner.asample(num_episodes=3, random_actions=True)
    assert [e.seq for e in log.events] == list(range(len(log.events)))
    assert {e.source for e in log.events} == {"env_runner:0"}


async def test_episodes_are_cut_exactly_at_autoreset_boundaries() -> None:
    runner, _ = make_runner(num_envs=4)
    chunks: list[Episode] = []
    for _ in range(5):
        chunks += await runner.asample(num_timesteps=97, random_actions=True)
    by_id: dict[str, list[Episode]] = defaultdict(list)
    for chunk in chunks:
        by_id[chunk.id_].append(chunk)
    for parts in by_id.values():
        starts = [p.t_started for p in parts]
        lengths = [len(p) for p in parts]
        # Chunks of one episode tile it without gaps or overlaps.
        assert starts == [sum(lengths[:i]) for i in range(len(parts))]
        for p in parts:
            assert len(p.observations) == len(p) + 1
            assert all(r == 1.0 for r in p.rewards)  # CartPole: the reset step is never a step
        assert not any(p.is_done for p in parts[:-1])
    done = [p for parts in by_id.values() for p in parts if p.is_done]
    assert done
    for p in done:
        # A finished CartPole episode ends out of bounds (terminated) or at 500 (truncated).
        x, theta = p.observations[-1][0], p.observations[-1][2]
        assert p.is_truncated or abs(x) > 2.4 or abs(theta) > 0.2095


async def test_sample_budgets() -> None:
    runner, _ = make_runner(num_envs=4)
    chunks = await runner.asample(num_timesteps=50, random_actions=True)
    assert 50 <= sum(len(c) for c in chunks) < 50 + 4
    chunks = await runner.asample(num_episodes=5, random_actions=True)
    assert sum(c.is_done for c in chunks) >= 5


async def test_on_episode_created_fires_before_the_reset() -> None:
    class CountingEnv(gym.Env[np.ndarray, int]):
        observation_space = gym.spaces.Box(-1, 1, (1,))
        action_space = gym.spaces.Discrete(2)

        def __init__(self, config: dict[str, Any]) -> None:
            self.resets = 0
            self.length = config["length"]
            self.t = 0

        def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
            self.resets += 1
            self.t = 0
            return np.zeros(1, dtype=np.float32), {"resets": self.resets}

        def step(self, action: int) -> Any:
            self.t += 1
            return np.zeros(1, dtype=np.float32), 1.0, self.t >= self.length, False, {}

    seen: list[tuple[int, int]] = []

    class Check(Callback):
        def on_episode_created(self, *, env: Any, env_index: int, **kwargs: Any) -> None:
            seen.append(("created", env.envs[env_index].unwrapped.resets))

        def on_episode_start(
            self, *, env: Any, env_index: int, episode: Episode, **kwargs: Any
        ) -> None:
            seen.append(("started", env.envs[env_index].unwrapped.resets))
            assert episode.get_infos(0)["resets"] == env.envs[env_index].unwrapped.resets

    config = PPOConfig().environment(CountingEnv, env_config={"length": 3})
    runner = EnvRunner(config, bus=Bus(Check))
    chunks = await runner.asample(num_episodes=3, random_actions=True)
    assert seen[:6] == [
        ("created", 0),
        ("started", 1),
        ("created", 1),
        ("started", 2),
        ("created", 2),
        ("started", 3),
    ]
    assert [len(c) for c in chunks if c.is_done] == [3, 3, 3]


async def test_envs_from_a_creator_function_get_their_context() -> None:
    contexts: list[Any] = []

    def creator(ctx: Any) -> gym.Env[Any, Any]:
        contexts.append(ctx)
        return gym.make("CartPole-v1", max_episode_steps=ctx["steps"])

    config = PPOConfig().environment(creator, env_config={"steps": 7})
    config.env_runners(num_envs_per_env_runner=2)
    runner = EnvRunner(config, bus=Bus(), worker_index=3)
    chunks = await runner.asample(num_episodes=4, random_actions=True)
    assert all(len(c) <= 7 for c in chunks)
    assert [(c.worker_index, c.vector_index, c["steps"]) for c in contexts] == [
        (3, 0, 7),
        (3, 1, 7),
    ]
    assert runner.env.envs[1].unwrapped is not None


def test_unknown_env_id_is_a_clear_error() -> None:
    config = PPOConfig().environment("CartPol-v1")
    with pytest.raises(ConfigError, match=r"unknown env id 'CartPol-v1'.*CartPole-v1"):
        config.build()


def test_sample_from_sync_code_and_asample_with_anyio_run() -> None:
    runner, _ = make_runner(num_envs=2)
    chunks = runner.sample(num_timesteps=40, random_actions=True)  # sync, as RLlib's
    assert sum(len(c) for c in chunks) >= 40
    chunks = anyio.run(
        functools.partial(runner.asample, num_timesteps=40, random_actions=True), backend="trio"
    )
    assert sum(len(c) for c in chunks) >= 40


async def test_bad_sample_arguments() -> None:
    runner, _ = make_runner()
    with pytest.raises(ConfigError, match="not both"):
        await runner.asample(num_timesteps=1, num_episodes=1)
    with pytest.raises(ConfigError, match=r"sample\(num_timesteps=0\): expected an int >= 1"):
        await runner.asample(num_timesteps=0)


def test_num_episodes_is_reported_when_no_episode_ended() -> None:
    # RLlib's get_metrics() logs NUM_EPISODES every time, 0 included: callbacks (RLlib's
    # evaluation_parallel_to_training example) read it without checking it is there.
    config = PPOConfig().environment("CartPole-v1").env_runners(num_envs_per_env_runner=2)
    with config.debugging(seed=1).build() as algo:
        runner = algo.env_runner
        runner.sample(num_timesteps=4, random_actions=True)  # too short to end one
        assert runner.metrics.peek("num_episodes") == 0
        runner.get_metrics()  # reduced: the count starts again
        runner.sample(num_episodes=2, random_actions=True)
        assert runner.metrics.peek("num_episodes") >= 2
        runner.get_metrics()
        runner.sample(num_timesteps=2, random_actions=True)
        assert runner.metrics.peek("num_episodes") == 0
