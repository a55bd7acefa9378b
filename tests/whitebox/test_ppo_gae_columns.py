"""PPO's GAE over columns: bit for bit what the per-trajectory recursion gives, and so the
same losses and weights, seed for seed, as the learner that ran it trajectory by trajectory."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from hookbus.runners import PPOConfig, PPOLearner, PPOModule, Trajectory
from hookbus.runners.algorithms.ppo._batch import TrainBatch, compute_gae_columns
from hookbus.runners.algorithms.ppo._learner import compute_gae

OBS_SPACE = gym.spaces.Box(-1.0, 1.0, (4,))


@pytest.mark.parametrize("values_dtype", [np.float32, np.float64])
@pytest.mark.parametrize("lengths", [(1,), (7, 5, 9), (3, 1, 40, 2, 2, 17)])
def test_columns_give_each_trajectorys_gae_bit_for_bit(
    lengths: tuple[int, ...], values_dtype: Any
) -> None:
    rng = np.random.default_rng(len(lengths))
    rewards = [rng.normal(1.0, 0.7, size=t) for t in lengths]
    values = [rng.normal(0.0, 3.0, size=t).astype(values_dtype) for t in lengths]
    bootstrap = np.array([0.0 if k % 2 else float(rng.normal()) for k in range(len(lengths))])

    advantages, targets = compute_gae_columns(
        np.concatenate(rewards),
        np.concatenate(values),
        bootstrap,
        np.array(lengths, dtype=np.intp),
        gamma=0.99,
        lambda_=0.95,
    )

    start = 0
    for r, v, b in zip(rewards, values, bootstrap, strict=True):
        adv, tgt = compute_gae(r, v, float(b), gamma=0.99, lambda_=0.95)
        np.testing.assert_array_equal(advantages[start : start + len(r)], adv)
        np.testing.assert_array_equal(targets[start : start + len(r)], tgt)
        start += len(r)


class TrajectoryByTrajectory(PPOLearner):
    """The learner as it was: GAE with one ``compute_gae`` call per trajectory."""

    def postprocess(self, trajectories: Sequence[Trajectory]) -> TrainBatch:
        m = self.module
        lengths = [len(tr.rewards) for tr in trajectories]
        all_obs = m._obs(np.concatenate([tr.observations for tr in trajectories]))
        all_values = m.compute_values(all_obs)
        keep = np.ones(len(all_obs), dtype=bool)
        keep[np.cumsum([t + 1 for t in lengths]) - 1] = False
        obs = all_obs[keep]
        actions = np.concatenate([np.asarray(tr.actions) for tr in trajectories])
        dist_inputs = m.action_dist_inputs(obs)
        advantages, targets = [], []
        start = 0
        for tr, t_len in zip(trajectories, lengths, strict=True):
            values = all_values[start : start + t_len]
            bootstrap = 0.0 if tr.terminated else float(all_values[start + t_len])
            adv, tgt = compute_gae(
                tr.rewards, values, bootstrap, gamma=self.gamma, lambda_=self.lambda_
            )
            advantages.append(adv)
            targets.append(tgt)
            start += t_len + 1
        adv_all = np.concatenate(advantages)
        adv_all = (adv_all - adv_all.mean()) / max(1e-4, float(adv_all.std()))
        return TrainBatch(
            obs=obs,
            actions=actions,
            action_dist_inputs=dist_inputs,
            action_logp=m.dist.logp(dist_inputs, actions),
            advantages=adv_all.astype(m.dtype),
            value_targets=np.concatenate(targets).astype(m.dtype),
        )


def trajectories(seed: int) -> list[Trajectory]:
    rng = np.random.default_rng(seed)
    module = PPOModule(OBS_SPACE, gym.spaces.Discrete(2), rng=seed)
    made = []
    for k, t_len in enumerate(rng.integers(1, 30, size=12)):
        obs = rng.uniform(-1.0, 1.0, size=(t_len + 1, 4))
        actions = module.forward_exploration(obs[:-1], rng)
        rewards = rng.normal(1.0, 0.5, size=t_len)
        made.append(Trajectory(obs, actions, rewards, terminated=k % 3 == 0))
    return made


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_learner_trains_as_it_did_seed_for_seed(dtype: Any) -> None:
    config = PPOConfig().training(minibatch_size=16)
    columns = PPOLearner(OBS_SPACE, gym.spaces.Discrete(2), config, seed=3, dtype=dtype)
    reference = TrajectoryByTrajectory(
        OBS_SPACE, gym.spaces.Discrete(2), config, seed=3, dtype=dtype
    )
    for seed in range(3):  # the weights move: later batches meet different values
        batch = trajectories(seed)
        assert columns.update(batch) == reference.update(batch)  # every loss and stat
        for name, value in columns.module.get_state().items():
            np.testing.assert_array_equal(value, reference.module.get_state()[name])
