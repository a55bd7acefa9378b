"""RLlib's episode names: ``get_extra_model_outputs()`` and ``to_numpy()``
(rllib/env/single_agent_episode.py), ``agent_episode_ids`` and ``get_agents_that_stepped()``
(rllib/env/multi_agent_episode.py)."""

from __future__ import annotations

import numpy as np
import pytest

from hookbus.runners import MultiAgentEpisode, SingleAgentEpisode


def three_steps() -> SingleAgentEpisode:
    episode = SingleAgentEpisode()
    episode.add_reset(0, {})
    for t in range(1, 4):
        episode.add_step(t, t - 1, float(t), False, False, {})
    return episode


def test_an_episode_holds_no_extra_model_outputs() -> None:
    episode = three_steps()
    with pytest.raises(KeyError, match=r"'action_logp'.*no extra model outputs"):
        episode.get_extra_model_outputs("action_logp")
    with pytest.raises(KeyError, match="'vf_preds'"):
        episode.get_extra_model_outputs("vf_preds", slice(0, 2), neg_index_as_lookback=True)


def test_to_numpy_returns_the_episode_whose_getters_give_arrays() -> None:
    episode = three_steps()
    assert episode.to_numpy() is episode
    assert isinstance(episode.get_observations([1]), np.ndarray)
    assert episode.get_rewards(slice(1, 3)).tolist() == [2.0, 3.0]
    assert episode.get_infos() == [{}, {}, {}, {}]


def test_agent_episode_ids_and_the_agents_that_stepped() -> None:
    episode = MultiAgentEpisode()
    episode.add_env_reset({"a": 0, "b": 0}, {})
    assert episode.get_agents_that_stepped() == {"a", "b"}
    ids = episode.agent_episode_ids
    assert ids == {a: e.id_ for a, e in episode.agent_episodes.items()}
    assert set(ids) == {"a", "b"}
    # Only "a" observes after the first step: "b" waits for its turn.
    episode.add_env_step({"a": 1}, {"a": 0, "b": 0}, {"a": 1.0}, {}, {}, {})
    assert episode.get_agents_that_stepped() == {"a"}
    # "b" observes and "a" terminates with its final observation: both stepped.
    episode.add_env_step({"a": 2, "b": 2}, {"a": 1}, {}, {"a": True}, {}, {})
    assert episode.get_agents_that_stepped() == {"a", "b"}
    assert episode.get_agents_to_act() == ["b"]
