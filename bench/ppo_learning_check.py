"""Check that the numpy PPO learner solves CartPole-v1: mean return of 100 episodes >= target.

Run ``python bench/ppo_learning_check.py --seed 0``. Each iteration samples ``train_batch_size``
env steps from a gymnasium sync vector env with the current policy, cuts them into
:class:`Trajectory` objects and calls ``PPOLearner.update`` once; it prints env steps so far,
the mean return of the last 100 finished episodes and the wall time, and stops when that mean
reaches ``--target`` (or after ``--max-steps`` env steps, exiting 1).

Every learner setting is PPOLearner's default; this script adds only the sampling settings
(``--num-envs`` 8, ``--train-batch-size`` 4000 env steps per iteration).
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from hookbus.runners._ppo import PPOLearner, PPOModule, Trajectory

DEFAULT_NUM_ENVS = 8
DEFAULT_TRAIN_BATCH_SIZE = 4000


class Sampler:
    """Step a gymnasium vector env with a module and cut the steps into trajectories.

    Gymnasium >= 1.0 resets sub-envs in NEXT_STEP mode: the step after a sub-env reported
    terminated/truncated ignores its action and returns the first observation of the next
    episode with reward 0. That step is a reset, not a transition: it is never recorded and
    never counted as an env step.
    """

    def __init__(self, env: gym.vector.VectorEnv[Any, Any, Any], seed: int) -> None:
        """Reset ``env`` with ``seed``; sample actions with an RNG derived from it."""
        mode = env.metadata.get("autoreset_mode")
        if getattr(mode, "value", mode) not in (None, "NextStep"):
            raise ValueError(f"expected the NEXT_STEP autoreset mode, the env uses {mode!r}")
        self.env = env
        self.rng = np.random.default_rng((seed, 1))
        self.num_envs = env.num_envs
        obs, _ = env.reset(seed=seed)
        self.obs = obs
        self.needs_reset = np.zeros(self.num_envs, dtype=bool)
        self.obs_buf: list[list[Any]] = [[o] for o in obs]
        self.act_buf: list[list[Any]] = [[] for _ in range(self.num_envs)]
        self.rew_buf: list[list[float]] = [[] for _ in range(self.num_envs)]
        self.returns = np.zeros(self.num_envs)
        self.finished_returns: list[float] = []

    def sample(self, module: PPOModule, num_steps: int) -> tuple[list[Trajectory], int]:
        """Return trajectories holding at least ``num_steps`` transitions, and their count."""
        trajectories: list[Trajectory] = []
        steps = 0
        while steps < num_steps:
            actions = module.forward_exploration(self.obs, self.rng)
            obs, rewards, terminated, truncated, _ = self.env.step(actions)
            for i in range(self.num_envs):
                if self.needs_reset[i]:
                    # The autoreset step: sub-env i only reset; its action was ignored.
                    self.obs_buf[i] = [obs[i]]
                    continue
                self.act_buf[i].append(actions[i])
                self.rew_buf[i].append(float(rewards[i]))
                self.obs_buf[i].append(obs[i])
                self.returns[i] += rewards[i]
                steps += 1
                if terminated[i] or truncated[i]:
                    trajectories.append(self._cut(i, terminated=bool(terminated[i])))
                    self.finished_returns.append(float(self.returns[i]))
                    self.returns[i] = 0.0
            self.needs_reset = terminated | truncated
            self.obs = obs
        # Ongoing episodes continue next iteration; the learner bootstraps these chunks.
        trajectories.extend(
            self._cut(i, terminated=False)
            for i in range(self.num_envs)
            if not self.needs_reset[i] and self.act_buf[i]
        )
        return trajectories, steps

    def _cut(self, i: int, *, terminated: bool) -> Trajectory:
        trajectory = Trajectory(
            observations=np.asarray(self.obs_buf[i]),
            actions=np.asarray(self.act_buf[i]),
            rewards=np.asarray(self.rew_buf[i]),
            terminated=terminated,
        )
        # The next chunk starts from the last observation (replaced on an autoreset step).
        self.obs_buf[i] = [self.obs_buf[i][-1]]
        self.act_buf[i] = []
        self.rew_buf[i] = []
        return trajectory


def main(argv: Sequence[str] | None = None) -> int:
    """Train until the target is reached; return 0 on success, 1 otherwise."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-steps", type=int, default=300_000)
    parser.add_argument("--target", type=float, default=450.0)
    parser.add_argument("--num-envs", type=int, default=DEFAULT_NUM_ENVS)
    parser.add_argument("--train-batch-size", type=int, default=DEFAULT_TRAIN_BATCH_SIZE)
    parser.add_argument("--env", default="CartPole-v1")
    args = parser.parse_args(argv)

    env = gym.make_vec(args.env, num_envs=args.num_envs, vectorization_mode="sync")
    learner = PPOLearner(env.single_observation_space, env.single_action_space, seed=args.seed)
    sampler = Sampler(env, args.seed)
    last_100: collections.deque[float] = collections.deque(maxlen=100)
    total_steps = 0
    start = time.perf_counter()
    iteration = 0
    while total_steps < args.max_steps:
        iteration += 1
        trajectories, steps = sampler.sample(learner.module, args.train_batch_size)
        total_steps += steps
        last_100.extend(sampler.finished_returns)
        sampler.finished_returns.clear()
        stats = learner.update(trajectories)
        mean_return = float(np.mean(last_100)) if last_100 else float("nan")
        print(
            f"iter {iteration:3d}  env_steps {total_steps:7d}  "
            f"return_mean_100 {mean_return:6.1f}  wall {time.perf_counter() - start:6.1f}s  "
            f"entropy {stats['entropy']:.3f}  kl {stats['mean_kl_loss']:.4f}  "
            f"vf_ev {stats['vf_explained_var']:.2f}",
            flush=True,
        )
        if len(last_100) == 100 and mean_return >= args.target:
            print(
                f"seed {args.seed}: reached {mean_return:.1f} >= {args.target:g} after "
                f"{total_steps} env steps in {time.perf_counter() - start:.1f}s"
            )
            return 0
    print(f"seed {args.seed}: target {args.target:g} not reached in {total_steps} env steps")
    return 1


if __name__ == "__main__":
    sys.exit(main())
