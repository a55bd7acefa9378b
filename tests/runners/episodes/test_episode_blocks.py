"""Episodes built from whole blocks of steps (``add_steps``, the columnar loop's hand-over)
read exactly as episodes built step by step (``add_step``), before and after the lists are
made: counts without making them, values and types after, and every way of reading."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from hookbus.events.codec import decode_msgpack, encode_msgpack
from hookbus.runners import Episode

OBS = np.arange(24, dtype=np.float32).reshape(6, 4)  # the reset's row, then five steps
ACTIONS = np.array([1, 0, 1, 1, 0])
REWARDS = [1.0, 0.5, 0.25, 2.0, -1.0]


def by_steps() -> Episode:
    episode = Episode(env_index=2, id_="e")
    episode.add_reset(OBS[0], {})
    for t in range(5):
        last = t == 4
        episode.add_step(OBS[t + 1], int(ACTIONS[t]), REWARDS[t], last, False, {})
    return episode


def by_blocks(actions: Any = ACTIONS) -> Episode:
    episode = Episode(env_index=2, id_="e")
    episode.add_reset(OBS[0], {})
    episode.add_steps(OBS[1:3], actions[:2], REWARDS[:2], None, False, False)
    episode.add_steps(OBS[3:], actions[2:], REWARDS[2:], None, True, False)
    return episode


def test_counts_and_return_need_no_lists() -> None:
    episode = by_blocks()
    assert (len(episode), episode.t, episode.env_steps(), episode.agent_steps()) == (5, 5, 5, 5)
    assert episode.get_return() == sum(REWARDS)
    assert episode.is_terminated
    assert not episode.is_truncated
    assert episode._pending is not None  # nothing above made the lists


@pytest.mark.parametrize("read", ["actions", "rewards", "observations", "infos"])
def test_reading_any_list_gives_what_add_step_gives(read: str) -> None:
    want, got = by_steps(), by_blocks()
    getattr(got, read)  # the first read makes every list
    assert got.actions == want.actions
    assert [type(a) for a in got.actions] == [int] * 5  # Python values, as add_step records
    assert got.rewards == want.rewards
    np.testing.assert_array_equal(np.asarray(got.observations), np.asarray(want.observations))
    assert got.infos == want.infos == [{}] * 6


def test_getters_chunks_and_state_match() -> None:
    want, got = by_steps(), by_blocks()
    np.testing.assert_array_equal(got.get_observations(), want.get_observations())
    np.testing.assert_array_equal(got.get_actions(), want.get_actions())
    np.testing.assert_array_equal(got.get_rewards(slice(1, 3)), want.get_rewards(slice(1, 3)))
    assert got.get_actions(-1) == want.get_actions(-1) == 0
    part_got, part_want = got.chunk(2), want.chunk(2)
    assert part_got.actions == part_want.actions
    assert part_got.rewards == part_want.rewards
    assert part_got.get_return() == part_want.get_return()
    state = decode_msgpack(encode_msgpack(got.get_state()))
    assert Episode.from_state(state).actions == want.actions


def test_rewards_as_arrays_read_as_python_floats() -> None:
    rewards = np.array([0.1, 0.2, 0.3, 0.4, 0.5], dtype=np.float32)  # the columns' dtype
    episode = Episode()
    episode.add_reset(OBS[0], {})
    episode.add_steps(OBS[1:3], ACTIONS[:2], rewards[:2], None, False, False)
    episode.add_steps(OBS[3:], ACTIONS[2:], rewards[2:], None, True, False)
    want = rewards.tolist()  # float32 values as Python floats, as the per-step loop logs
    total = 0.0
    for value in want:
        total += value  # add_step's order
    assert episode.get_return() == total
    assert episode.rewards == want
    assert [type(r) for r in episode.rewards] == [float] * 5


def test_array_actions_per_row_stay_arrays() -> None:
    actions = np.array([[0.5, -1.0], [0.0, 1.0], [1.5, 2.0], [0.1, 0.2], [0.3, 0.4]])
    episode = by_blocks(actions)
    assert len(episode) == 5
    assert [a.tolist() for a in episode.actions] == actions.tolist()


def test_writes_after_blocks_keep_the_order() -> None:
    episode = by_blocks()
    episode.rewards[-1] = 3.0  # a postprocessing handler rewriting a reward in place
    episode.set_rewards([0.0], at_indices=[0])
    assert episode.rewards == [0.0, 0.5, 0.25, 2.0, 3.0]
    assert episode.get_return() == 5.75
    ongoing = Episode()
    ongoing.add_reset(OBS[0], {})
    ongoing.add_steps(OBS[1:3], ACTIONS[:2], REWARDS[:2], None, False, False)
    ongoing.add_step(OBS[3], 1, 0.25, False, False, {"x": 1})  # after a block: in order
    assert ongoing.actions == [1, 0, 1]
    assert ongoing.infos == [{}, {}, {}, {"x": 1}]
    assert len(ongoing) == 3
