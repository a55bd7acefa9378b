"""The multi-agent EnvRunner: hooks, MultiAgentEpisodes, turns, leaving agents, metrics."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import numpy as np
import pytest

from hookbus.kernel import Callback, ConfigError
from hookbus.runners import (
    MultiAgentCartPole,
    MultiAgentEpisode,
    PolicySpec,
    PPOConfig,
    make_multi_agent,
)
from hookbus.runners.env_runner._bus import make_bus
from hookbus.runners.env_runner._multi_agent_env_runner import MultiAgentEnvRunner

from ..multi_agent_envs import LeavingEnv, TurnBasedEnv, by_agent


class Hooks(Callback):
    """Count the hooks and check each against the episode it gets."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()
        self.lens: dict[str, int] = {}
        self.ended: list[MultiAgentEpisode] = []

    def on_environment_created(self, **kwargs: Any) -> None:
        self.counts["env_created"] += 1

    def on_episode_created(self, *, episode: Any, **kwargs: Any) -> None:
        self.counts["created"] += 1
        assert isinstance(episode, MultiAgentEpisode)
        assert len(episode) == 0
        assert not episode.agent_episodes

    def on_episode_start(self, *, episode: Any, **kwargs: Any) -> None:
        self.counts["start"] += 1
        self.lens[episode.id_] = 0
        assert episode.agent_episodes
        assert len(episode) == 0

    def on_episode_step(self, *, episode: Any, env_index: int, **kwargs: Any) -> None:
        self.counts["step"] += 1
        self.lens[episode.id_] += 1
        assert episode.env_index == env_index
        assert len(episode) == self.lens[episode.id_]
        episode.add_temporary_timestep_data("t", len(episode))
        for agent_id in episode.get_agents_to_act():  # per agent about to act: its steps so far
            agent = episode.agent_episodes[agent_id]
            agent.add_temporary_timestep_data("seen", len(agent))

    def on_episode_end(self, *, episode: Any, **kwargs: Any) -> None:
        self.counts["end"] += 1
        assert episode.is_done
        assert len(episode) == self.lens[episode.id_]
        assert episode.get_temporary_timestep_data("t") == list(range(1, len(episode) + 1))
        self.ended.append(episode)

    def on_sample_end(self, *, samples: Any, **kwargs: Any) -> None:
        self.counts["sample"] += 1


def runner(config: PPOConfig, hooks: Hooks | None = None) -> MultiAgentEnvRunner:
    config.validate()
    bus = make_bus(config.copy().callbacks([hooks] if hooks else []))
    return MultiAgentEnvRunner(config, bus=bus)


def sample(r: MultiAgentEnvRunner, **kwargs: Any) -> list[Any]:
    result: list[Any] = r.sample(random_actions=True, **kwargs)  # sync, as RLlib's
    return result


def cartpole(num_envs: int = 1) -> PPOConfig:
    return (
        PPOConfig()
        .environment(MultiAgentCartPole, env_config={"num_agents": 2})
        .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=by_agent)
        .env_runners(num_envs_per_env_runner=num_envs)
        .debugging(seed=3)
    )


@pytest.mark.parametrize("num_envs", [1, 3])
def test_every_hook_gets_a_multi_agent_episode_and_steps_count_env_steps(num_envs: int) -> None:
    hooks = Hooks()
    r = runner(cartpole(num_envs), hooks)
    chunks = sample(r, num_timesteps=300)
    counts = hooks.counts
    assert counts["env_created"] == 1
    assert counts["sample"] == 1
    assert counts["step"] == 300 == sum(map(len, chunks))
    assert counts["created"] == counts["start"] == counts["end"] + num_envs
    for episode in hooks.ended:
        agents = episode.agent_episodes
        assert set(agents) == {0, 1}
        assert {a.module_id for a in agents.values()} == {"p0", "p1"}
        assert episode.module_for(0) == "p0"
        assert episode.module_for(1) == "p1"
        # Each agent plays its own CartPole: the episode lasts as long as the longer one.
        assert len(episode) == max(len(a) for a in agents.values())
        assert episode.get_return() == pytest.approx(sum(a.get_return() for a in agents.values()))
        assert episode.get_rewards()[0].tolist() == [1.0] * len(agents[0])
        # Per-agent temporary data: an entry after each step that left the agent to act.
        for agent in agents.values():
            assert agent.get_temporary_timestep_data("seen") == list(range(1, len(agent)))


def test_turn_based_agents_alternate_and_collect_rewards_between_turns() -> None:
    config = (
        PPOConfig()
        .environment(TurnBasedEnv, env_config={"length": 7})
        .multi_agent(policies={"pa", "pb"}, policy_mapping_fn=lambda aid, *a, **kw: f"p{aid}")
        .debugging(seed=0)
    )
    hooks = Hooks()
    r = runner(config, hooks)
    sample(r, num_episodes=2)
    episode = hooks.ended[0]
    a, b = episode.agent_episodes["a"], episode.agent_episodes["b"]
    assert len(episode) == 7
    # "a" moves at steps 1, 3, 5, 7 and "b" at 2, 4, 6: a transition ends at the agent's next
    # observation (or the episode's end); rewards in between add up into it.
    assert len(a) == 4
    assert len(b) == 3
    assert a.get_rewards().tolist() == [1.5, 1.5, 1.5, 1.0]
    # b's 0.5 from "a"'s first move came before b's first action: it counts into b's first.
    assert b.get_rewards().tolist() == [2.0, 1.5, 1.5]
    assert [int(o[0]) for o in a.get_observations()] == [0, 2, 4, 6, 6]  # last obs stands in
    assert [int(o[0]) for o in b.get_observations()] == [1, 3, 5, 5]
    assert a.is_terminated
    assert b.is_terminated
    assert episode.is_terminated
    assert episode.get_return() == 7 * 1.0 + 7 * 0.5  # every reward the env gave
    assert [info["turn"] for info in b.get_infos()[:3]] == [1, 3, 5]
    assert a.get_temporary_timestep_data("seen") == [1, 2, 3]  # to act after steps 2, 4, 6
    assert b.get_temporary_timestep_data("seen") == [0, 1, 2]  # after steps 1, 3, 5


def test_an_agent_leaving_early_stops_acting_and_the_episode_goes_on() -> None:
    config = (
        PPOConfig()
        .environment(LeavingEnv, env_config={"length": 9, "leave_at": 4})
        .multi_agent(policies=["p0", "p1"], policy_mapping_fn=by_agent)
        .debugging(seed=0)
    )
    hooks = Hooks()
    r = runner(config, hooks)
    sample(r, num_episodes=1)
    (episode,) = hooks.ended
    zero, one = episode.agent_episodes[0], episode.agent_episodes[1]
    assert len(episode) == 9
    assert episode.is_truncated
    assert not episode.is_terminated
    assert len(zero) == 9
    assert zero.is_truncated
    assert zero.get_return() == 9.0
    assert len(one) == 4
    assert one.is_terminated
    assert one.get_return() == 8.0
    assert one.get_temporary_timestep_data("seen") == [1, 2, 3]  # none once it left
    assert zero.get_temporary_timestep_data("seen") == list(range(1, 9))


def test_chunks_hand_out_each_env_step_once() -> None:
    r = runner(cartpole(2))
    first = sample(r, num_timesteps=30)
    second = sample(r, num_timesteps=30)
    assert sum(map(len, first)) == sum(map(len, second)) == 30
    by_id: dict[str, list[Any]] = {}
    for chunk in first + second:
        by_id.setdefault(chunk.id_, []).append(chunk)
    for chunks in by_id.values():
        starts = [c.t_started for c in chunks]
        assert starts == sorted(starts)
        for earlier, later in itertools.pairwise(chunks):
            assert later.t_started == earlier.t_started + len(earlier)
            for agent_id, agent in later.agent_episodes.items():
                before = earlier.agent_episodes.get(agent_id)
                if before is not None:  # the later chunk starts at the earlier one's end
                    np.testing.assert_array_equal(
                        agent.get_observations(0), before.get_observations(-1)
                    )


def test_results_carry_rllibs_per_agent_and_per_module_keys() -> None:
    r = runner(cartpole(2))
    sample(r, num_timesteps=400)
    metrics = r.get_metrics()
    from hookbus.metrics import MetricsLogger, results

    logger = MetricsLogger()
    logger.aggregate([metrics], key="env_runners")
    runners = results(logger)["env_runners"]
    assert set(runners["agent_episode_returns_mean"]) == {"0", "1"}
    assert set(runners["module_episode_returns_mean"]) == {"p0", "p1"}
    assert set(runners["agent_steps"]) == {"0", "1"}
    assert sum(runners["num_agent_steps_sampled"].values()) == sum(
        runners["num_module_steps_sampled"].values()
    )
    assert runners["num_env_steps_sampled"] == 400
    # With independent copies, the episode return is the sum of the agents' means.
    assert runners["episode_return_mean"] == pytest.approx(
        sum(runners["agent_episode_returns_mean"].values())
    )


def test_bad_multi_agent_settings_are_clear_config_errors() -> None:
    base = PPOConfig().environment(MultiAgentCartPole, env_config={"num_agents": 2})
    with pytest.raises(ConfigError, match="not a policy; policies: 'p0'"):
        r = runner(base.copy().multi_agent(policies={"p0"}, policy_mapping_fn=by_agent))
    with pytest.raises(ConfigError, match="policy 'p9' has no spaces"):
        runner(base.copy().multi_agent(policies={"p0", "p1", "p9"}, policy_mapping_fn=by_agent))
    with pytest.raises(ConfigError, match="policies must be a non-empty set"):
        base.copy().multi_agent(policies="p0").validate()
    with pytest.raises(ConfigError, match="policies_to_train names 'px'"):
        base.copy().multi_agent(policies={"p0"}, policies_to_train=["px"]).validate()
    with pytest.raises(ConfigError, match="must be None or a PolicySpec"):
        base.copy().multi_agent(policies={"p0": 3}).validate()
    with pytest.raises(ConfigError, match="needs a MultiAgentEnv"):
        runner(PPOConfig().environment("CartPole-v1").multi_agent(policies={"p0"}))
    # A policy no agent maps to is fine when its spaces are given.
    spec = PolicySpec(
        observation_space=MultiAgentCartPole().observation_space,
        action_space=MultiAgentCartPole().action_space,
    )
    r = runner(
        base.copy().multi_agent(
            policies={"p0": None, "p1": None, "p9": spec}, policy_mapping_fn=by_agent
        )
    )
    assert set(r.spaces) == {"p0", "p1", "p9"}


def test_a_creator_making_a_multi_agent_env_needs_multi_agent_settings() -> None:
    config = PPOConfig().environment(lambda ctx: MultiAgentCartPole(ctx))
    config.validate()
    from hookbus.runners import EnvRunner

    with pytest.raises(ConfigError, match=r"made a MultiAgentEnv .*config.multi_agent"):
        EnvRunner(config, bus=make_bus(config))
    # Said so, it works, every agent on default_policy.
    config.multi_agent(policies={"default_policy"})
    r = runner(config)
    assert set(r.spaces) == {"default_policy"}


def test_unknown_mapping_in_the_middle_of_sampling_names_the_agent() -> None:
    config = (
        PPOConfig()
        .environment(make_multi_agent("CartPole-v1"), env_config={"num_agents": 3})
        .multi_agent(
            policies={"p0", "p1", "p2"},
            policy_mapping_fn=lambda aid, episode, **kw: (
                f"p{aid}" if episode is None else f"q{aid}"
            ),
        )
    )
    # Spaces are found with episode=None; a real episode then maps agent 0 to "q0".
    r = runner(config)
    with pytest.raises(ConfigError, match="mapped agent 0 to 'q0'"):
        sample(r, num_timesteps=5)
