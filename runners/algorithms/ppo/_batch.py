"""PPO's data: trajectories, GAE, explained variance and the train batch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._nn import Array

__all__ = (
    "TrainBatch",
    "Trajectory",
    "compute_gae",
    "compute_gae_columns",
    "explained_variance",
)


@dataclass(frozen=True)
class Trajectory:
    """Hold one episode, or a chunk of one: T transitions.

    ``observations`` has T + 1 rows: it ends with the observation after the last action.
    ``terminated`` says that observation is terminal (its value is 0); otherwise (truncated,
    or cut by the sampler) the learner bootstraps with V(last observation).
    """

    observations: NDArray[Any]
    actions: NDArray[Any]
    rewards: NDArray[Any]
    terminated: bool

    def __post_init__(self) -> None:
        """Check that the lengths agree (T >= 1)."""
        t = len(self.rewards)
        if t < 1 or len(self.actions) != t or len(self.observations) != t + 1:
            raise ValueError(
                f"a Trajectory needs T >= 1 actions and rewards and T + 1 observations, got "
                f"{len(self.observations)} observations, {len(self.actions)} actions, "
                f"{t} rewards"
            )


def compute_gae(
    rewards: NDArray[Any],
    values: Array,
    bootstrap_value: float,
    *,
    gamma: float,
    lambda_: float,
) -> tuple[Array, Array]:
    """Return GAE advantages and value targets (advantages + values) for one trajectory.

    ``values`` are V(s_0..s_{T-1}); ``bootstrap_value`` stands for V(s_T): 0 when s_T is
    terminal, the value estimate when the trajectory was truncated or cut.
    """
    t_len = len(rewards)
    next_values = np.empty(t_len)
    next_values[:-1] = values[1:]
    next_values[-1] = bootstrap_value
    deltas = np.asarray(rewards, dtype=np.float64) + gamma * next_values - values
    advantages = np.empty(t_len)
    acc = 0.0
    decay = gamma * lambda_
    # A sequential recursion; T is at most an episode's length, so the loop stays cheap.
    for t in range(t_len - 1, -1, -1):
        acc = float(deltas[t]) + decay * acc
        advantages[t] = acc
    return advantages, advantages + values


def compute_gae_columns(
    rewards: NDArray[Any],
    values: Array,
    bootstrap_values: Array,
    lengths: NDArray[np.intp],
    *,
    gamma: float,
    lambda_: float,
) -> tuple[Array, Array]:
    """Return GAE advantages and value targets of many trajectories at once: exactly (bit
    for bit) what ``compute_gae`` gives for each, one after the other.

    ``rewards`` and ``values`` hold the trajectories' rows one after the other (``lengths``
    of them each), ``bootstrap_values`` one V(s_T) per trajectory. The trajectories become
    the columns of a (longest, count) array, zero past each one's end, and the recursion
    runs backwards over its rows: one numpy step per time step instead of a Python step
    per row. Each element sees ``compute_gae``'s very float64 operations, in its order
    (past an end, ``0.0 + decay * 0.0`` keeps the accumulator at zero).
    """
    count, total = len(lengths), int(np.sum(lengths))
    ends = np.cumsum(lengths)
    next_values = np.empty(total)
    next_values[:-1] = values[1:]  # the next row: the same trajectory's, but at its end
    next_values[ends - 1] = bootstrap_values
    deltas = np.asarray(rewards, dtype=np.float64) + gamma * next_values - values
    row = np.arange(total) - np.repeat(ends - lengths, lengths)  # the step in its trajectory
    column = np.repeat(np.arange(count), lengths)
    grid = np.zeros((int(np.max(lengths)), count))
    grid[row, column] = deltas
    decay, acc = gamma * lambda_, np.zeros(count)
    # Backwards over time steps, every trajectory at once: acc = delta + decay * acc.
    for t in range(len(grid) - 1, -1, -1):
        acc = grid[t] + decay * acc
        grid[t] = acc
    advantages = grid[row, column]
    return advantages, advantages + values


def explained_variance(targets: Array, predictions: Array) -> float:
    """Return 1 - Var(targets - predictions) / Var(targets), floored at -1 (as RLlib)."""
    var_y = float(np.var(targets))
    if var_y == 0.0:
        return 0.0 if float(np.var(targets - predictions)) == 0.0 else -1.0
    return max(-1.0, 1.0 - float(np.var(targets - predictions)) / var_y)


@dataclass(frozen=True)
class TrainBatch:
    """Hold the columns the loss needs, one row per timestep (RLlib's ``Columns``)."""

    obs: Array
    actions: NDArray[Any]
    action_dist_inputs: Array  # of the policy that sampled (pre-update weights)
    action_logp: Array
    advantages: Array
    value_targets: Array

    def __len__(self) -> int:
        """Return the number of timesteps."""
        return len(self.obs)

    def take(self, idx: NDArray[np.intp]) -> TrainBatch:
        """Return the rows ``idx`` (a minibatch)."""
        return TrainBatch(
            self.obs[idx],
            self.actions[idx],
            self.action_dist_inputs[idx],
            self.action_logp[idx],
            self.advantages[idx],
            self.value_targets[idx],
        )
