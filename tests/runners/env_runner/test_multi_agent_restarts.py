"""restart_failed_sub_environments with multi-agent envs: a sub-env that raises is made anew
in place, its episode ends truncated, and sampling goes on (RLlib's crashing-env example)."""

from __future__ import annotations

from collections import Counter
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import pytest

from hookbus.kernel import Callback
from hookbus.runners import MultiAgentEnv, PPOConfig
from hookbus.runners.env_runner._bus import make_bus
from hookbus.runners.env_runner._multi_agent_env_runner import MultiAgentEnvRunner

from ..multi_agent_envs import by_agent

_OBS = gym.spaces.Box(-1.0, 100.0, (2,), np.float32)
_ACT = gym.spaces.Discrete(2)
LENGTH = 10


class Crashing(MultiAgentEnv):
    """Agents 0 and 1 act together for ``LENGTH`` steps (then truncated). Sub-env 0's
    instances fail as ``plan`` says, by the order they were made: ``"step:N"`` raises at
    the instance's N-th step, ``"reset"`` at its first reset, ``"ok"`` never."""

    plan: ClassVar[list[str]] = []
    made: ClassVar[Counter[int]] = Counter()

    def __init__(self, config: Any) -> None:
        super().__init__()
        self.possible_agents = [0, 1]
        self.agents = [0, 1]
        self.observation_spaces = {0: _OBS, 1: _OBS}
        self.action_spaces = {0: _ACT, 1: _ACT}
        index = config.vector_index
        n = Crashing.made[index]
        Crashing.made[index] += 1
        fails = Crashing.plan[n] if index == 0 and n < len(Crashing.plan) else "ok"
        self.fails = fails
        self.t = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        if self.fails == "reset":
            raise OSError("the env's server is gone")
        self.t = 0
        return {0: np.zeros(2, np.float32), 1: np.ones(2, np.float32)}, {}

    def step(self, action_dict: dict[Any, Any]) -> Any:
        self.t += 1
        if self.fails == f"step:{self.t}":
            raise ValueError(f"crash at step {self.t}")
        observations = {a: np.full(2, self.t, np.float32) for a in action_dict}
        rewards = dict.fromkeys(action_dict, 1.0)
        return observations, rewards, {"__all__": False}, {"__all__": self.t >= LENGTH}, {}


@pytest.fixture
def plan() -> Any:
    def set_plan(*steps: str) -> None:
        Crashing.plan = list(steps)

    Crashing.made.clear()
    yield set_plan
    Crashing.plan = []
    Crashing.made.clear()


class Ends(Callback):
    def __init__(self) -> None:
        super().__init__()
        self.ended: list[Any] = []
        self.steps = 0

    def on_episode_step(self, **kwargs: Any) -> None:
        self.steps += 1

    def on_episode_end(self, *, episode: Any, **kwargs: Any) -> None:
        self.ended.append(episode)


def config(restart: bool = True, tolerance: int = 100) -> PPOConfig:
    return (
        PPOConfig()
        .environment(Crashing)
        .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=by_agent)
        .env_runners(num_envs_per_env_runner=2)
        .fault_tolerance(
            restart_failed_sub_environments=restart,
            num_consecutive_env_runner_failures_tolerance=tolerance,
        )
        .training(train_batch_size=60, minibatch_size=30, num_epochs=1)
        .debugging(seed=0)
    )


def runner(cfg: PPOConfig, ends: Ends) -> MultiAgentEnvRunner:
    cfg.validate()
    return MultiAgentEnvRunner(cfg, bus=make_bus(cfg.copy().callbacks([ends])))


def test_a_crashed_sub_env_is_made_anew_and_only_its_episode_ends(plan: Any) -> None:
    # Sub-env 0: its first instance raises at step 4, the next fails its reset, the third
    # works. Sub-env 1 never fails.
    plan("step:4", "reset", "ok")
    ends = Ends()
    r = runner(config(), ends)
    chunks = r.sample(num_timesteps=60, random_actions=True)
    assert sum(map(len, chunks)) == 60 == ends.steps  # sampling went on to its budget
    assert Crashing.made[0] == 3
    assert Crashing.made[1] == 1
    crashed = [e for e in ends.ended if len(e) != LENGTH]
    assert [len(e) for e in crashed] == [4]
    (episode,) = crashed
    assert episode.env_index == 0
    assert episode.is_truncated
    assert not episode.is_terminated
    for agent in episode.agent_episodes.values():  # each agent's last step: the failure
        assert agent.is_truncated
        assert len(agent) == 4
        assert agent.get_infos()[-1] == {"env_step_failure": "ValueError('crash at step 4')"}
        assert agent.get_rewards()[-1] == 0.0
        assert agent.get_observations()[-1].tolist() == [3.0, 3.0]  # its last good one
    others = [e for e in ends.ended if e is not episode]
    assert others
    assert all(len(e) == LENGTH and e.is_truncated for e in others)
    r.stop()


def test_without_restarts_the_crash_fails_the_runner(plan: Any) -> None:
    plan("step:4")
    r = runner(config(restart=False), Ends())
    with pytest.raises(ValueError, match="crash at step 4"):
        r.sample(num_timesteps=60, random_actions=True)
    r.stop()


def test_more_failures_in_a_row_than_the_tolerance_fail_the_runner(plan: Any) -> None:
    plan("step:1", "step:1", "step:1")
    r = runner(config(tolerance=1), Ends())
    with pytest.raises(ValueError, match="crash at step 1") as caught:
        r.sample(num_timesteps=60, random_actions=True)
    assert "failed 2 times in a row" in "\n".join(caught.value.__notes__)
    r.stop()


def test_an_algorithm_trains_on_through_crashes(plan: Any) -> None:
    plan("step:4", "step:7")
    with config().build() as algo:
        result = algo.train()
        result = algo.train()
    assert result["num_env_steps_sampled_lifetime"] >= 120
    assert Crashing.made[0] == 3
