"""Episode: the API callbacks use, and the chunks the learner gets."""

from __future__ import annotations

import numpy as np
import pytest

from hookbus.runners import Episode


def episode_of(n: int, *, terminated: bool = True) -> Episode:
    episode = Episode(env_index=1)
    episode.add_reset(np.array([0.0, 0.0]), {"start": True})
    for t in range(1, n + 1):
        done = t == n
        episode.add_step(
            np.array([t, -t], dtype=float),
            t % 2,
            float(t),
            done and terminated,
            done and not terminated,
            {"t": t},
        )
    return episode


def test_returns_lengths_and_flags() -> None:
    episode = episode_of(4)
    assert len(episode) == 4
    assert episode.get_return() == 10.0
    assert episode.is_done
    assert episode.is_terminated
    assert not episode.is_truncated
    truncated = episode_of(2, terminated=False)
    assert truncated.is_truncated
    assert not truncated.is_terminated


def test_getters_stack_and_index_like_rllib() -> None:
    episode = episode_of(3)
    assert episode.get_observations().shape == (4, 2)  # reset + 3 steps
    np.testing.assert_array_equal(episode.get_observations(-1), [3.0, -3.0])
    np.testing.assert_array_equal(episode.get_actions(), [1, 0, 1])
    np.testing.assert_array_equal(episode.get_rewards(slice(1, None)), [2.0, 3.0])
    assert episode.get_infos(0) == {"start": True}
    assert episode.get_infos([1, 2]) == [{"t": 1}, {"t": 2}]


def test_temporary_timestep_data_and_custom_data() -> None:
    episode = episode_of(2)
    episode.add_temporary_timestep_data("theta", 0.5)
    episode.add_temporary_timestep_data("theta", 1.5)
    assert episode.get_temporary_timestep_data("theta") == [0.5, 1.5]
    episode.custom_data["anything"] = [1]
    with pytest.raises(KeyError, match=r"no temporary timestep data 'phi'.*keys: 'theta'"):
        episode.get_temporary_timestep_data("phi")


def test_set_rewards_keeps_the_return_true() -> None:
    episode = episode_of(3)
    episode.set_rewards([10.0], at_indices=-1)
    assert episode.get_return() == 1.0 + 2.0 + 10.0
    episode.set_rewards(np.zeros(3))
    assert episode.get_return() == 0.0
    with pytest.raises(ValueError, match="set_rewards got 2 rewards for 3 positions"):
        episode.set_rewards([1.0, 2.0])


def test_chunks_copy_the_steps_from_a_point_on() -> None:
    episode = episode_of(5)
    chunk = episode.chunk(3)
    assert chunk.id_ == episode.id_
    assert chunk.t_started == 3
    assert len(chunk) == 2
    assert chunk.get_return() == 9.0
    assert len(chunk.observations) == 3  # the observation before its first action, too
    chunk.rewards[0] = 99.0
    assert episode.rewards[3] == 4.0  # a copy
