"""RLlib's own episode tests for t, t_started, cut(), get_state()/from_state() and lengths.

Ported from ray-project/ray (the newest stored versions, read in the search tool):
``rllib/env/tests/test_single_agent_episode.py`` (``test_init``, ``test_add_env_reset``,
``test_add_env_step``, ``test_cut``, ``test_concat_episode``, ``test_get_and_from_state``)
and ``rllib/env/tests/test_multi_agent_episode.py`` (``test_cut``, ``test_len``,
``test_get_state_and_from_state``). RLlib builds episodes with its constructor
(``SingleAgentEpisode(observations=..., len_lookback_buffer=0)``) or ``add_env_reset`` /
``add_env_step``; hookbus with ``Episode.from_steps``, ``add_reset`` / ``add_step`` and
``MultiAgentEpisode.add_env_reset`` / ``add_env_step``, the same data in the same order.

Not kept, and why:

- everything on ``extra_model_outputs``, ``observation_space`` / ``action_space``,
  ``multi_agent_episode_id`` and ``is_numpy``: hookbus episodes have none of these;
- the constructor's ``len_lookback_buffer`` (episodes whose first steps are lookback):
  hookbus makes lookback buffers only with ``cut()``; the lookback cases below use
  ``cut(len_lookback_buffer=...)`` instead, with RLlib's expectations for the cut chunk;
- ``concat_episode``, ``slice`` / ``episode[a:b]``, ``get_terminateds`` and the
  env-step-indexed multi-agent getters (``env_steps=True``): not hookbus API (its
  multi-agent getters index each agent's own steps), so ``test_cut``'s getter checks and
  its "another complex case" are kept only for lengths and timesteps;
- private internals (``env_t_to_agent_t``, ``_hanging_actions_end``,
  ``_hanging_rewards_begin``/``_end``, ``_start_time``, ``_last_step_time``,
  ``agent_to_module_mapping_fn``): checked through public equivalents instead
  (``completed_at()``, continuing both episodes with the same step, ``get_state()``,
  ``module_for()``);
- the multi-agent ``test_cut`` case of an agent with a pending (hanging) action: RLlib's
  successor leaves that agent out (its transition is lost, its rewards wait in a cache
  until it observes again); hookbus keeps the agent with its pending action, which the
  successor completes. The assertions on the other agent are kept; the test states what
  hookbus does for the waiting one (the same reward total, 1.0, as RLlib's cache).
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import numpy as np
import pytest

from hookbus.runners import Episode, MultiAgentEpisode, SingleAgentEpisode


def stepped(steps: int, *, t: int = 0) -> Episode:
    """RLlib's TestEnv: observation and reward t at step t, terminated at step 200."""
    episode = SingleAgentEpisode()
    episode.add_reset(t, {})
    for _ in range(steps):
        t += 1
        episode.add_step(t, t - 1, float(t), t == 200, False, {})
    return episode


def simple_episode(observations: list[dict[str, int]]) -> MultiAgentEpisode:
    """RLlib's ``_create_simple_episode``: agents act with the value they observed and get
    a tenth of it as reward."""
    episode = MultiAgentEpisode()
    episode.add_env_reset(observations[0], {})
    for acting, seen in pairwise(observations):
        rewards = {agent: value / 10 for agent, value in acting.items()}
        episode.add_env_step(seen, dict(acting), rewards, {}, {}, {})
    return episode


# --- single-agent -------------------------------------------------------------------------


def test_init() -> None:
    episode = SingleAgentEpisode()
    assert episode.t_started == episode.t == 0
    episode = SingleAgentEpisode(t_started=10)
    assert episode.t == episode.t_started == 10
    observations = list(range(101))
    episode = Episode.from_steps(
        observations=observations,
        actions=observations[:-1],
        rewards=[float(o) for o in observations[:-1]],
        infos=[{} for _ in observations],
    )
    assert len(episode) == 100
    assert episode.t == 100
    assert episode.t_started == 0


def test_add_env_reset() -> None:
    episode = SingleAgentEpisode()
    episode.add_reset(np.zeros(4), {})
    assert len(episode.observations) == 1
    assert len(episode.infos) == 1
    assert episode.t == episode.t_started == 0


def test_add_env_step() -> None:
    episode = stepped(100)
    assert episode.t == len(episode.observations) - 1 == 100
    assert episode.t_started == 0
    assert (
        len(episode.actions)
        == len(episode.rewards)
        == len(episode.observations) - 1
        == len(episode.infos) - 1
        == 100
    )
    assert not episode.is_terminated
    assert not episode.is_truncated
    assert not episode.is_done


def test_cut() -> None:
    episode_1 = stepped(100)
    assert episode_1.t == 100
    episode_2 = episode_1.cut()
    assert episode_1.id_ == episode_2.id_
    assert episode_1.t == episode_2.t == episode_2.t_started
    assert episode_1.observations[-1] == episode_2.observations[0]
    assert episode_1.infos[-1] == episode_2.infos[0]
    # Immutability: stepping the successor leaves its predecessor as it was.
    episode_2.add_step(101, 100, 101.0, False, False, {})
    assert len(episode_1.observations) != len(episode_2.observations)


def test_cut_then_continue_as_in_test_concat_episode() -> None:
    episode_1 = stepped(100)
    episode_2 = episode_1.cut()
    for t in range(101, 201):
        episode_2.add_step(t, t - 1, float(t), t == 200, False, {})
    assert episode_1.t == episode_2.t_started
    assert episode_2.t == 200
    assert episode_2.is_terminated


def test_cut_docstring_lookback() -> None:
    # RLlib's cut() docstring: "if self ends in actions 5, 6, 7, and 8, and we call
    # self.cut(len_lookback_buffer=2), the returned chunk will have actions 7 and 8 already
    # in it, but still t_started==t==8 (not 7!) and a length of 0".
    episode = stepped(8)
    assert episode.get_actions(slice(-4, None)).tolist() == [4, 5, 6, 7]
    successor = episode.cut(len_lookback_buffer=2)
    assert successor.t_started == successor.t == 8
    assert len(successor) == 0
    assert successor.get_actions([-2, -1], neg_index_as_lookback=True).tolist() == [6, 7]
    assert successor.actions == []  # the lookback is not part of the chunk


def test_get_and_from_state() -> None:
    episode = stepped(100)
    episode.custom_data["kept"] = [1, 2]
    state = episode.get_state()
    episode_2 = SingleAgentEpisode.from_state(state)
    assert episode_2.id_ == episode.id_
    assert episode_2.agent_id == episode.agent_id
    assert episode_2.t == episode.t
    assert episode_2.t_started == episode.t_started
    assert episode_2.observations[5] == episode.observations[5]
    assert episode_2.actions[5] == episode.actions[5]
    assert episode_2.rewards[5] == episode.rewards[5]
    assert episode_2.infos[5] == episode.infos[5]
    assert episode_2.is_terminated == episode.is_terminated
    assert episode_2.is_truncated == episode.is_truncated
    assert episode_2.custom_data == episode.custom_data
    assert episode_2.get_state() == state  # the times came along too


# --- multi-agent ------------------------------------------------------------------------------


def test_multi_agent_cut_of_agents_that_always_step() -> None:
    episode = simple_episode([{"a0": 0, "a1": 0}, {"a0": 1, "a1": 1}, {"a0": 2, "a1": 2}])
    successor = episode.cut()
    assert len(successor) == 0
    assert successor.env_t_started == 2
    assert successor.env_t == 2
    assert {a: successor.completed_at(a) for a in ("a0", "a1")} == {"a0": [], "a1": []}
    a0, a1 = successor.agent_episodes["a0"], successor.agent_episodes["a1"]
    assert (len(a0), len(a1)) == (0, 0)
    assert (a0.t_started, a1.t_started) == (2, 2)
    assert (a0.t, a1.t) == (2, 2)
    assert (a0.observations, a1.observations) == ([2], [2])
    assert (a0.actions, a1.actions) == ([], [])
    assert (a0.rewards, a1.rewards) == ([], [])
    assert successor.get_agents_to_act() == ["a0", "a1"]


def test_multi_agent_cut_with_a_lookback_buffer() -> None:
    episode = simple_episode([{"a0": i, "a1": i} for i in range(4)])
    successor = episode.cut(len_lookback_buffer=2)
    assert len(successor) == 0
    assert successor.env_t_started == successor.env_t == 3
    a0, a1 = successor.agent_episodes["a0"], successor.agent_episodes["a1"]
    assert (len(a0), len(a1)) == (0, 0)
    assert (a0.t_started, a1.t_started) == (3, 3)
    assert (a0.t, a1.t) == (3, 3)
    assert (a0.observations, a1.observations) == ([3], [3])
    assert (a0.actions, a1.actions) == ([], [])
    assert (a0.rewards, a1.rewards) == ([], [])
    # RLlib's lookback mapping [0, 1, 2] (lookback 2): the last two steps are reachable.
    lookback = successor.get_observations(slice(-2, None), neg_index_as_lookback=True)
    assert {a: v.tolist() for a, v in lookback.items()} == {"a0": [1, 2, 3], "a1": [1, 2, 3]}
    actions = successor.get_actions([-2, -1], neg_index_as_lookback=True)
    assert {a: v.tolist() for a, v in actions.items()} == {"a0": [1, 2], "a1": [1, 2]}


def test_multi_agent_cut_while_an_agent_waits_with_rewards() -> None:
    observations: list[dict[str, Any]] = [{"a0": 0, "a1": 0}, {"a0": 1}, {"a0": 2}, {"a0": 3}]
    rewards = [{"a0": 0.0, "a1": 0.0}, {"a0": 0.1, "a1": 0.1}, {"a0": 0.2, "a1": 0.2}]
    episode = MultiAgentEpisode()
    episode.add_env_reset(observations[0], {})
    for acting, seen, reward in zip(observations, observations[1:], rewards, strict=False):
        episode.add_env_step(seen, dict(acting), reward, {}, {}, {})
    successor = episode.cut()
    assert len(successor) == 0
    assert successor.env_t_started == successor.env_t == 3
    a0 = successor.agent_episodes["a0"]
    assert (len(a0), a0.t_started, a0.t) == (0, 3, 3)
    assert (a0.observations, a0.actions, a0.rewards) == ([3], [], [])
    successor.add_env_step({"a0": 4}, {"a0": 3}, {"a0": 0.3, "a1": 0.3}, {}, {}, {})
    assert (len(successor), successor.env_t_started, successor.env_t) == (1, 3, 4)
    assert (len(a0), a0.t_started, a0.t) == (1, 3, 4)
    assert (a0.observations, a0.actions, a0.rewards) == ([3, 4], [3], [0.3])
    successor.add_env_step({"a0": 5, "a1": 5}, {"a0": 4}, {"a0": 0.4, "a1": 0.4}, {}, {}, {})
    assert (len(successor), successor.env_t_started, successor.env_t) == (2, 3, 5)
    assert (len(a0), a0.t, a0.observations, a0.actions) == (2, 5, [3, 4, 5], [3, 4])
    assert a0.rewards == [0.3, 0.4]
    # hookbus (see the header): a1's action of step 1 completes here, with every reward
    # it got meanwhile (RLlib's begin cache holds the same 1.0).
    a1 = successor.agent_episodes["a1"]
    assert (len(a1), a1.t_started, a1.t) == (1, 0, 1)
    assert (a1.observations, a1.actions) == ([0, 5], [0])
    assert a1.rewards == [pytest.approx(1.0)]


def test_multi_agent_cut_of_a_long_episode() -> None:
    # RLlib's 100-step case with its MultiAgentTestEnv (agent_1 terminates at step 50).
    episode_1 = MultiAgentEpisode()
    alive = {f"agent_{i}" for i in range(4)}
    episode_1.add_env_reset(dict.fromkeys(sorted(alive), 0), {})
    for t in range(1, 101):
        acting = dict.fromkeys(sorted(alive), t)
        done = {"agent_1": t == 50}
        episode_1.add_env_step(dict(acting), acting, dict.fromkeys(acting, 1.0), done, {}, {})
        if t == 50:
            alive.discard("agent_1")
    assert episode_1.env_t == 100
    episode_2 = episode_1.cut()
    assert episode_1.id_ == episode_2.id_
    assert len(episode_1) == 100
    assert len(episode_2) == 0
    for agent_id, agent_episode in episode_2.agent_episodes.items():
        assert agent_episode.id_ == episode_1.agent_episodes[agent_id].id_
    assert "agent_1" not in episode_2.agent_episodes  # done agents stay behind
    assert episode_1.env_t_started == 0
    assert episode_2.env_t == episode_2.env_t_started
    assert episode_1.env_t == episode_2.env_t_started


def test_multi_agent_cut_with_lookback_where_agents_rarely_step() -> None:
    # RLlib's "another complex case": lengths and timesteps.
    episode = simple_episode(
        [
            *({"a0": 0}, {"a2": 0}, {"a2": 1}, {"a2": 2}, {"a0": 1}, {"a2": 3}, {"a2": 4}),
            *({"a2": 5}, {"a0": 2}, {"a1": 0}),
        ]
    )
    successor = episode.cut(len_lookback_buffer=1)
    assert len(successor) == 0
    assert successor.env_t == 9
    assert successor.env_t_started == 9
    assert all(len(e) == 0 for e in successor.agent_episodes.values())


def test_multi_agent_len() -> None:
    observations: list[dict[str, int]] = [{"a0": 0, "a1": 0}, {"a1": 1}, {"a0": 2}]
    observations.append({"a0": 3, "a1": 3})
    assert len(simple_episode(observations)) == 3
    for more, expected in (({"a1": 4}, 4), ({"a0": 5, "a1": 5}, 5), ({"a0": 6}, 6)):
        observations.append(more)
        assert len(simple_episode(observations)) == expected
        assert simple_episode(observations).env_steps() == expected


def test_multi_agent_get_state_and_from_state() -> None:
    episode = simple_episode(
        [
            *({"a0": 0, "a1": 0}, {"a1": 1}, {"a1": 2}, {"a0": 3, "a1": 3}, {"a0": 4}),
            *({"a0": 5, "a1": 5}, {"a0": 6, "a1": 6}, {"a1": 7}, {"a1": 8}, {"a0": 9}),
        ]
    )
    state = episode.get_state()
    assert state
    episode_2 = MultiAgentEpisode.from_state(state)
    assert episode_2.id_ == episode.id_
    assert episode_2.module_for("a0") == episode.module_for("a0")
    assert episode_2.env_t_started == episode.env_t_started
    assert episode_2.env_t == episode.env_t
    for agent_id, agent_episode in episode.agent_episodes.items():
        assert episode_2.agent_episodes[agent_id].t_started == agent_episode.t_started
        assert episode_2.agent_episodes[agent_id].id_ == agent_episode.id_
        assert episode_2.completed_at(agent_id) == episode.completed_at(agent_id)
    assert episode_2.is_terminated == episode.is_terminated
    assert episode_2.is_truncated == episode.is_truncated
    assert set(episode_2.agent_episodes) == set(episode.agent_episodes)
    assert episode_2.get_agents_to_act() == episode.get_agents_to_act()
    assert episode_2.get_state() == state  # times, pending actions and rewards included
    # The pending actions and rewards work the same: both episodes take the same step.
    for one in (episode, episode_2):
        one.add_env_step({"a0": 10, "a1": 10}, {"a0": 9}, {"a0": 1.0, "a1": 1.0}, {}, {}, {})
    for agent_id in ("a0", "a1"):
        assert episode_2.get_rewards()[agent_id].tolist() == (
            episode.get_rewards()[agent_id].tolist()
        )
    assert episode_2.agent_steps() == episode.agent_steps()
