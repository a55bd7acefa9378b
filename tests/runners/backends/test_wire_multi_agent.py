"""Multi-agent episode chunks cross the process boundary (``Sampled``) unchanged."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hookbus.runners import Episode, MultiAgentEpisode
from hookbus.runners.backends._wire import (
    Sampled,
    decode_reply,
    encode,
    episode_from_wire,
    episode_to_wire,
)

sys.path.insert(0, str(Path(__file__).parents[2]))
from multi_agent_helpers import (
    TurnBased,
    assert_same_agent_episode,
    assert_same_episode,
    cartpole_run,
    module_of,
    turn_based_run,
)


def round_trip(*episodes: Any) -> list[Any]:
    """Send ``episodes`` as a worker does and rebuild them as the Algorithm does."""
    reply = decode_reply(encode(Sampled(episodes=[episode_to_wire(e) for e in episodes])))
    assert isinstance(reply, Sampled)
    return [episode_from_wire(e) for e in reply.episodes]


def assert_same_chunk(got: Any, want: MultiAgentEpisode) -> None:
    assert_same_episode(got, want)
    for start in range(len(want) + 1):  # what each agent's env steps were came along too
        assert_same_episode(got.chunk(start), want.chunk(start))


@pytest.mark.parametrize("make_run", [cartpole_run, turn_based_run])
def test_chunks_of_finished_episodes_round_trip(make_run: Any) -> None:
    for episode in make_run().episodes:
        cuts = sorted({0, 1, len(episode) // 2, len(episode) - 1, len(episode)})
        chunks = [episode.chunk(start) for start in cuts]
        for got, want in zip(round_trip(*chunks), chunks, strict=True):
            assert_same_chunk(got, want)
            assert len(got) == len(want)
            assert got.get_return() == want.get_return()


def test_a_chunk_cut_while_an_agents_action_hangs_round_trips() -> None:
    env = TurnBased()
    env.action_spaces["a"].seed(1)
    env.action_spaces["b"].seed(2)
    episode = MultiAgentEpisode(agent_to_module_mapping_fn=module_of)
    episode.add_env_reset(*env.reset(seed=0))  # "b" leaves at step 7
    chunks, taken = [], {"a": 0, "b": 0}
    for step in range(1, 8):
        actions = {a: env.get_action_space(a).sample() for a in episode.get_agents_to_act()}
        observations, rewards, terminateds, truncateds, infos = env.step(actions)
        episode.add_env_step(observations, actions, rewards, terminateds, truncateds, infos)
        taken.update({a: taken[a] + 1 for a in actions})
        if step in (3, 5):  # "a" just acted: its action hangs until its next turn
            assert len(episode.agent_episodes["a"]) == taken["a"] - 1
            chunks.append(episode.chunk(0 if step == 3 else 3))
    first, second = chunks
    assert len(first.agent_episodes["a"]) == 1  # its step-3 action is in no chunk yet...
    assert second.agent_episodes["a"].t_started == 1  # ... but in the next one
    got_first, got_second = round_trip(first, second)
    assert_same_chunk(got_first, first)
    assert_same_chunk(got_second, second)
    assert got_first.env_t == got_second.t_started == 3
    assert got_first.get_agents_to_act() == []  # a chunk carries completed transitions only
    assert got_first.module_for("b") == "module_b"


def test_int_agent_ids_stay_ints_and_modules_stay() -> None:
    episode = cartpole_run().episodes[0]
    (got,) = round_trip(episode)
    assert all(type(a) is int for a in got.agent_ids)
    assert {a: got.module_for(a) for a in got.agent_ids} == {0: "module_0", 1: "module_1"}
    assert got.module_for(7) == "default_policy"  # no mapping function crosses the pipe


def test_single_and_multi_agent_chunks_share_a_reply() -> None:
    single = Episode.from_steps(
        observations=[np.zeros(2), np.ones(2)],
        actions=[np.int64(1)],
        rewards=[0.5],
        infos=[{}, {"x": 1}],
        terminated=True,
        id_="s",
    )
    multi = turn_based_run().episodes[0]
    got_single, got_multi = round_trip(single, multi)
    assert_same_agent_episode(got_single, single)
    assert got_single.agent_id is None
    assert got_single.module_id is None
    assert_same_episode(got_multi, multi)
