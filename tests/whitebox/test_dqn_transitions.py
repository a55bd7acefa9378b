"""White-box: DQN's n-step transition rows and the dueling head (private numerics)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from hookbus.runners import DQNModule, Episode
from hookbus.runners.algorithms.dqn._transitions import NStepTransitions

OBS_SPACE = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)


def make_episode(length: int, *, terminated: bool, truncated: bool = False) -> Episode:
    """Return an episode whose observation t is [t, t] and reward t is t + 1."""
    episode = Episode()
    episode.add_reset(np.array([0.0, 0.0], dtype=np.float32), {})
    for t in range(length):
        last = t == length - 1
        obs = np.array([t + 1.0, t + 1.0], dtype=np.float32)
        episode.add_step(obs, t % 2, float(t + 1), terminated and last, truncated and last, {})
    return episode


def test_one_step_transitions_mark_only_a_terminal_last_step() -> None:
    rows = NStepTransitions(1)([make_episode(3, terminated=True)])
    assert rows is not None
    np.testing.assert_array_equal(rows["obs"][:, 0], [0, 1, 2])
    np.testing.assert_array_equal(rows["new_obs"][:, 0], [1, 2, 3])
    np.testing.assert_array_equal(rows["actions"], [0, 1, 0])
    np.testing.assert_array_equal(rows["rewards"], [1, 2, 3])
    np.testing.assert_array_equal(rows["terminateds"], [False, False, True])
    np.testing.assert_array_equal(rows["n_step"], [1, 1, 1])
    truncated = NStepTransitions(1)([make_episode(3, terminated=False, truncated=True)])
    assert truncated is not None
    assert not truncated["terminateds"].any()  # a truncated episode bootstraps


def test_n_step_rows_are_the_same_whether_or_not_chunks_cut_the_episode() -> None:
    gamma = 0.9
    whole = NStepTransitions(3, gamma)([make_episode(7, terminated=True)])
    assert whole is not None
    np.testing.assert_array_equal(whole["new_obs"][:, 0], [3, 4, 5, 6, 7, 7, 7])
    np.testing.assert_array_equal(whole["n_step"], [3, 3, 3, 3, 3, 2, 1])
    np.testing.assert_array_equal(whole["terminateds"], [0, 0, 0, 0, 1, 1, 1])
    np.testing.assert_allclose(whole["rewards"][0], 1 + 0.9 * 2 + 0.81 * 3, rtol=1e-6)
    np.testing.assert_allclose(whole["rewards"][-1], 7)

    episode = make_episode(7, terminated=True)
    builder = NStepTransitions(3, gamma)
    parts = []
    for start, stop in ((0, 1), (1, 4), (4, 7)):  # chunks as the EnvRunner hands them out
        chunk = episode.chunk(start)
        chunk.observations = chunk.observations[: stop - start + 1]
        chunk.actions, chunk.rewards = chunk.actions[: stop - start], chunk.rewards[: stop - start]
        chunk.is_terminated = stop == 7
        parts.append(builder([chunk]))
    assert parts[0] is None  # one step cannot complete a 3-step row yet
    for name, column in whole.items():
        joined = np.concatenate([p[name] for p in parts if p is not None])
        np.testing.assert_array_equal(joined, column)


def test_waiting_steps_of_an_abandoned_episode_are_dropped() -> None:
    builder = NStepTransitions(3)
    builder([make_episode(4, terminated=False)])
    assert builder._pending
    builder([make_episode(2, terminated=True)])
    assert not builder._pending


def test_the_dueling_heads_mean_q_is_the_value() -> None:
    module = DQNModule(OBS_SPACE, gym.spaces.Discrete(3, start=5), rng=0)
    obs = np.random.default_rng(0).uniform(-1, 1, (50, 3))
    q = module.q_values(obs)
    out = module.q(module._obs(obs))
    np.testing.assert_allclose(q.mean(axis=1), out[:, 0], rtol=1e-5, atol=1e-6)  # mean Q == V
