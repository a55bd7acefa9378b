"""Episodes' RLlib timekeeping and chunking: t, env/agent steps, durations, cut(), states.

RLlib's own tests of these are ported in test_episode_rllib.py; this file covers what they
leave open (durations, lookback reads, states through events.codec, error cases).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from hookbus.events.codec import decode_json, decode_msgpack, encode_json, encode_msgpack
from hookbus.runners import Episode, MultiAgentEpisode


class FakeClock:
    """Stand in for ``time.perf_counter``: time moves only when a test says so."""

    def __init__(self) -> None:
        self.now = 500.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """Give a fake clock that the episode modules read instead of ``time.perf_counter``."""
    fake = FakeClock()
    for module in ("_episode", "_multi_agent_episode", "_multi_agent_copies"):
        monkeypatch.setattr(f"hookbus.runners.episodes.{module}.perf_counter", fake)
    return fake


def episode_of(
    steps: int, *, done_at: int | None = None, clock: FakeClock | None = None
) -> Episode:
    """Observation t (an array), action t - 1 and reward t at step t; 1 s per step."""
    episode = Episode(env_index=2)
    episode.add_reset(np.array([0.0, 0.0]), {"t": 0})
    for t in range(1, steps + 1):
        if clock is not None:
            clock.advance(1.0)
        episode.add_step(np.array([t, -t], float), t - 1, float(t), t == done_at, False, {"t": t})
    return episode


def two_agents(steps: int) -> MultiAgentEpisode:
    """Agents 0 and 1 both act every env step; agent 1 also gets a reward on its own."""
    episode = MultiAgentEpisode(env_index=1)
    episode.add_env_reset({0: 0, 1: 0}, {0: {}, 1: {}})
    for t in range(1, steps + 1):
        episode.add_env_step({0: t, 1: t}, {0: t - 1, 1: t - 1}, {0: 1.0, 1: 2.0}, {}, {}, {})
    return episode


# --- t, env_steps(), agent_steps() ---------------------------------------------------------


def test_t_counts_the_steps_from_t_started() -> None:
    episode = episode_of(5)
    assert (episode.t_started, episode.t, len(episode)) == (0, 5, 5)
    chunk = episode.chunk(3)
    assert (chunk.t_started, chunk.t, len(chunk)) == (3, 5, 2)
    assert Episode(t_started=7).t == 7


def test_env_and_agent_steps() -> None:
    episode = episode_of(4)
    assert episode.env_steps() == episode.agent_steps() == len(episode) == 4
    multi = two_agents(3)
    assert multi.env_steps() == len(multi) == 3
    assert multi.agent_steps() == 6  # two agents stepped every env step
    assert multi.chunk(1).env_steps() == 2
    assert multi.chunk(1).agent_steps() == 4


# --- get_duration_s() -----------------------------------------------------------------------


def test_duration_from_the_reset_to_the_final_step(clock: FakeClock) -> None:
    episode = Episode()
    assert episode.get_duration_s() == 0.0  # no reset yet
    episode.add_reset(0, {})
    clock.advance(3.0)
    assert episode.get_duration_s() == 0.0  # no step yet (RLlib's 0.0)
    episode.add_step(1, 0, 1.0, False, False, {})
    assert episode.get_duration_s() == 3.0  # ongoing: to now
    clock.advance(2.0)
    episode.add_step(2, 0, 1.0, True, False, {})
    clock.advance(10.0)
    assert episode.get_duration_s() == 5.0  # frozen at the final step
    assert episode.get_state()["_end_time"] == 505.0


def test_duration_of_a_truncated_episode(clock: FakeClock) -> None:
    episode = episode_of(2, clock=clock)
    episode.truncate()
    clock.advance(7.0)
    assert episode.get_duration_s() == 2.0


def test_chunks_span_the_time_between_hand_outs(clock: FakeClock) -> None:
    episode = episode_of(3, clock=clock)
    first = episode.chunk(0)  # handed out at 3 s
    for t in range(4, 6):
        clock.advance(1.0)
        episode.add_step(t, t - 1, float(t), t == 5, False, {})
    clock.advance(4.0)
    second = episode.chunk(3)  # the episode ended at 5 s
    clock.advance(1.0)
    assert first.get_duration_s() == 3.0
    assert second.get_duration_s() == 2.0
    assert episode.get_duration_s() == 5.0


def test_a_cut_successor_times_itself_from_the_cut(clock: FakeClock) -> None:
    episode = episode_of(3, clock=clock)
    clock.advance(1.0)
    successor = episode.cut()
    clock.advance(2.0)
    successor.add_step(9, 0, 1.0, True, False, {})
    assert successor.get_duration_s() == 2.0


def test_multi_agent_duration(clock: FakeClock) -> None:
    episode = MultiAgentEpisode()
    episode.add_env_reset({"a": 0}, {})
    assert episode.get_duration_s() == 0.0
    clock.advance(2.0)
    episode.add_env_step({"a": 1}, {"a": 0}, {"a": 1.0}, {}, {}, {})
    assert episode.get_duration_s() == 2.0
    clock.advance(1.0)
    episode.add_env_step({"a": 2}, {"a": 1}, {"a": 1.0}, {"__all__": True}, {}, {})
    clock.advance(5.0)
    assert episode.get_duration_s() == 3.0
    assert episode.agent_episodes["a"].get_duration_s() == 3.0
    other = two_agents(1)
    clock.advance(4.0)
    other.truncate()
    clock.advance(1.0)
    assert other.get_duration_s() == 4.0


def test_multi_agent_chunks_span_the_time_between_hand_outs(clock: FakeClock) -> None:
    episode = two_agents(0)
    clock.advance(1.0)
    episode.add_env_step({0: 1, 1: 1}, {0: 0, 1: 0}, {}, {}, {}, {})
    first = episode.chunk(0)
    clock.advance(2.0)
    episode.add_env_step({0: 2, 1: 2}, {0: 1, 1: 1}, {}, {"__all__": True}, {}, {})
    clock.advance(3.0)
    second = episode.chunk(1)
    assert (first.get_duration_s(), second.get_duration_s()) == (1.0, 2.0)
    assert second.agent_episodes[0].get_duration_s() == 2.0


# --- cut() and the lookback buffer ----------------------------------------------------------


def test_cut_keeps_the_predecessor_and_copies_custom_data() -> None:
    episode = episode_of(4)
    episode.custom_data["seen"] = [1]
    episode.add_temporary_timestep_data("x", 1)
    before = episode.get_state()
    successor = episode.cut(len_lookback_buffer=2)
    assert episode.get_state() == before
    assert successor.custom_data == {"seen": [1]}
    successor.custom_data["seen"].append(2)
    assert episode.custom_data == {"seen": [1]}  # a deep copy, as RLlib's
    assert successor.get_return() == 0.0  # lookback rewards are not the chunk's
    assert (successor.env_index, successor.t_started) == (episode.env_index, 4)
    with pytest.raises(KeyError, match="no temporary timestep data 'x'"):
        successor.get_temporary_timestep_data("x")


def test_lookback_reads() -> None:
    successor = episode_of(4).cut(len_lookback_buffer=3)
    successor.add_step(np.array([5, -5], float), 4, 5.0, False, False, {"t": 5})
    assert successor.get_observations(-1, neg_index_as_lookback=True).tolist() == [3, -3]
    assert successor.get_observations(0, neg_index_as_lookback=True).tolist() == [4, -4]
    assert successor.get_rewards(slice(-3, None), neg_index_as_lookback=True).tolist() == [
        2.0,
        3.0,
        4.0,
        5.0,
    ]
    assert successor.get_actions([-3, 0], neg_index_as_lookback=True).tolist() == [1, 4]
    assert successor.get_infos(slice(-1, 1), neg_index_as_lookback=True) == [{"t": 3}, {"t": 4}]
    assert successor.get_infos(-3, neg_index_as_lookback=True) == {"t": 1}
    # A slice takes what exists; an index outside is an IndexError (RLlib's).
    assert successor.get_rewards(slice(-9, -2), neg_index_as_lookback=True).tolist() == [2.0]
    with pytest.raises(IndexError, match="lookback buffer of 3 steps"):
        successor.get_rewards(-4, neg_index_as_lookback=True)
    with pytest.raises(IndexError):
        successor.get_actions([-4], neg_index_as_lookback=True)
    # Without the keyword, negative indices count from the end of the chunk only.
    assert successor.get_rewards(-1) == 5.0
    assert successor.get_rewards().tolist() == [5.0]


def test_lookback_is_lowered_to_what_the_episode_has() -> None:
    successor = episode_of(2).cut(len_lookback_buffer=10)
    assert successor.get_actions(slice(-10, None), neg_index_as_lookback=True).tolist() == [0, 1]
    assert episode_of(0).cut(5).get_actions(slice(-5, 0), neg_index_as_lookback=True).size == 0


def test_cut_refuses_a_done_episode_and_a_negative_lookback() -> None:
    with pytest.raises(RuntimeError, match=r"cannot cut\(\) episode .* it is done"):
        episode_of(2, done_at=2).cut()
    with pytest.raises(ValueError, match="len_lookback_buffer=-1 must be >= 0"):
        episode_of(2).cut(-1)
    multi = two_agents(1)
    multi.truncate()
    with pytest.raises(RuntimeError, match=r"cannot cut\(\) multi-agent episode"):
        multi.cut()


def test_cut_of_an_episode_not_yet_reset() -> None:
    successor = Episode(t_started=3).cut()
    assert (successor.observations, successor.t_started, len(successor)) == ([], 3, 0)


def test_multi_agent_successor_maps_new_agents_and_copies_custom_data() -> None:
    def policy_of(agent_id: Any, episode: Any) -> str:
        return f"p_{agent_id}"

    episode = MultiAgentEpisode(agent_to_module_mapping_fn=policy_of)
    episode.add_env_reset({"a": 0}, {})
    episode.custom_data["log"] = [0]
    successor = episode.cut()
    successor.custom_data["log"].append(1)
    assert episode.custom_data == {"log": [0]}
    successor.add_env_step({"a": 1, "b": 1}, {"a": 0}, {"a": 1.0}, {}, {}, {})
    assert successor.module_for("b") == "p_b"
    assert successor.agent_episodes["b"].t_started == 0
    assert successor.get_return() == 1.0


def test_multi_agent_lookback_follows_the_env_steps() -> None:
    episode = MultiAgentEpisode()
    episode.add_env_reset({"a": 0, "b": 0}, {})
    episode.add_env_step({"a": 1, "b": 1}, {"a": 0, "b": 0}, {}, {}, {}, {})
    episode.add_env_step({"a": 2}, {"a": 1, "b": 1}, {}, {}, {}, {})  # b waits
    successor = episode.cut(len_lookback_buffer=1)
    # One env step back: a's step 2 only; b completed nothing in it.
    looked = successor.get_actions(slice(-5, None), neg_index_as_lookback=True)
    assert {agent: v.tolist() for agent, v in looked.items()} == {"a": [1], "b": []}
    successor.add_env_step({"b": 3}, {"a": 2}, {"b": 1.0}, {}, {}, {})
    assert successor.agent_episodes["b"].actions == [1]  # b's pending action completed


# --- get_state() / from_state() --------------------------------------------------------------


def via_msgpack(state: dict[str, Any]) -> dict[str, Any]:
    decoded: dict[str, Any] = decode_msgpack(encode_msgpack(state))
    return decoded


def via_json(state: dict[str, Any]) -> dict[str, Any]:
    decoded: dict[str, Any] = decode_json(encode_json(state))
    return decoded


@pytest.mark.parametrize("ship", [copy.deepcopy, via_msgpack, via_json])
def test_single_agent_state_round_trips(ship: Callable[[Any], Any]) -> None:
    episode = episode_of(5).cut(len_lookback_buffer=2)
    episode.add_step(np.array([6.0, -6.0]), 5, 6.0, False, True, {"t": 6})
    episode.agent_id, episode.module_id = "agent_0", "p0"
    episode.custom_data["n"] = 1
    episode.add_temporary_timestep_data("theta", 0.5)
    restored = Episode.from_state(ship(episode.get_state()))
    assert (restored.t_started, restored.t, len(restored)) == (5, 6, 1)
    assert (restored.agent_id, restored.module_id, restored.env_index) == ("agent_0", "p0", 2)
    assert restored.is_truncated
    assert restored.get_return() == 6.0
    assert restored.get_observations().tolist() == [[5.0, -5.0], [6.0, -6.0]]
    assert restored.get_rewards([-2, -1], neg_index_as_lookback=True).tolist() == [4.0, 5.0]
    assert restored.custom_data == {"n": 1}
    assert restored.get_temporary_timestep_data("theta") == [0.5]
    assert restored.get_duration_s() == episode.get_duration_s()


@pytest.mark.parametrize("ship", [copy.deepcopy, via_msgpack, via_json])
def test_multi_agent_state_round_trips(ship: Callable[[Any], Any]) -> None:
    episode = MultiAgentEpisode(env_index=3, t_started=4)
    episode.add_env_reset({0: np.zeros(2), (1, "x"): np.ones(2)}, {})
    episode.add_env_step({0: np.ones(2)}, {0: 1, (1, "x"): 2}, {(1, "x"): 0.5}, {}, {}, {})
    state = episode.get_state(exclude_agent_to_module_mapping_fn=True)
    assert "agent_to_module_mapping_fn" not in state
    restored = MultiAgentEpisode.from_state(ship(state))
    assert restored.agent_ids == [0, (1, "x")]  # int and tuple ids survive JSON
    assert (restored.env_t_started, restored.env_t, restored.env_index) == (4, 5, 3)
    assert restored.get_agents_to_act() == [0]
    # The pending action of (1, "x") and its pending reward came along.
    restored.add_env_step({(1, "x"): np.zeros(2)}, {0: 3}, {(1, "x"): 0.25}, {}, {}, {})
    waiting = restored.agent_episodes[(1, "x")]
    assert (waiting.actions, waiting.rewards) == ([2], [0.75])


def test_a_state_keeps_the_mapping_function_unless_excluded() -> None:
    def policy_of(agent_id: Any, episode: Any) -> str:
        return "p"

    episode = MultiAgentEpisode(agent_to_module_mapping_fn=policy_of)
    restored = MultiAgentEpisode.from_state(episode.get_state())
    assert restored.module_for("new") == "p"


def test_a_state_is_a_snapshot() -> None:
    episode = episode_of(2)
    state = episode.get_state()
    episode.add_step(np.zeros(2), 0, 1.0, False, False, {})
    first = Episode.from_state(state)
    first.add_step(np.zeros(2), 0, 1.0, False, False, {})
    assert len(Episode.from_state(state)) == 2


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"t": 9}, "t=9 is not t_started"),
        ({"rewards": [1.0]}, "as many rewards as actions"),
        ({"len_lookback_buffer": 3}, "no more lookback than actions"),
        ({"observations": [0]}, "one observation and info more than actions"),
        ({"infos": None}, "not a single-agent episode state"),
    ],
)
def test_malformed_single_agent_states(change: dict[str, Any], message: str) -> None:
    state = {**episode_of(2).get_state(), **change}
    with pytest.raises(ValueError, match=message):
        Episode.from_state(state)
    with pytest.raises(ValueError, match="not a single-agent episode state: it has no '"):
        Episode.from_state({})


def test_malformed_multi_agent_states() -> None:
    state = two_agents(2).get_state()
    with pytest.raises(ValueError, match="completed_at names other agents"):
        MultiAgentEpisode.from_state({**state, "completed_at": []})
    with pytest.raises(ValueError, match="not a multi-agent episode state: invalid literal"):
        MultiAgentEpisode.from_state({**state, "env_t": "x"})
    with pytest.raises(ValueError, match="not a multi-agent episode state: it has no 'id_'"):
        MultiAgentEpisode.from_state({k: v for k, v in state.items() if k != "id_"})
