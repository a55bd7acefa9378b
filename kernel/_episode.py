"""A single-agent episode: built by EnvRunners, rebuilt by replay, read by callbacks."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ("Episode", "SingleAgentEpisode")

Indices = int | slice | Sequence[int] | None


class TemporaryData:
    """Per-step scratch lists that callbacks keep on an episode (never sent to the learner)."""

    __slots__ = ()
    _temporary: dict[str, list[Any]]
    id_: str

    def add_temporary_timestep_data(self, key: str, value: Any) -> None:
        """Append ``value`` to the per-step scratch list ``key`` (not sent to the learner)."""
        data = self._temporary.get(key)
        if data is None:
            self._temporary[key] = [value]
        else:
            data.append(value)

    def get_temporary_timestep_data(self, key: str) -> list[Any]:
        """Return the values added under ``key``, in order."""
        try:
            return self._temporary[key]
        except KeyError:
            known = ", ".join(map(repr, self._temporary)) or "none"
            raise KeyError(
                f"no temporary timestep data {key!r} in episode {self.id_}; keys: {known}"
            ) from None


class Episode(TemporaryData):
    """Hold one episode's observations, actions, rewards and infos, step by step.

    ``observations`` has one more entry than ``actions``: the first comes from the reset. The
    object a callback receives is the whole episode, across ``sample()`` calls; ``sample()``
    returns chunks (copies holding the steps not handed out before, ``t_started`` saying
    where each starts).
    """

    __slots__ = (
        "_return",
        "_temporary",
        "actions",
        "agent_id",
        "custom_data",
        "env_index",
        "id_",
        "infos",
        "is_terminated",
        "is_truncated",
        "module_id",
        "observations",
        "rewards",
        "t_started",
    )

    def __init__(self, env_index: int = 0, id_: str | None = None, t_started: int = 0) -> None:
        self.id_: str = id_ if id_ is not None else uuid.uuid4().hex
        self.env_index = env_index
        self.t_started = t_started
        self.observations: list[Any] = []
        self.actions: list[Any] = []
        self.rewards: list[float] = []
        self.infos: list[dict[str, Any]] = []
        self.is_terminated = False
        self.is_truncated = False
        self.custom_data: dict[str, Any] = {}
        """Anything a callback wants to keep with the episode."""
        self._temporary: dict[str, list[Any]] = {}
        self._return = 0.0
        self.agent_id: Any = None
        """In a ``MultiAgentEpisode``: the agent this episode belongs to (None otherwise)."""
        self.module_id: str | None = None
        """In a ``MultiAgentEpisode``: the module (policy) that acts for the agent."""

    @classmethod
    def from_steps(
        cls,
        *,
        observations: list[Any],
        actions: list[Any],
        rewards: list[float],
        infos: list[dict[str, Any]],
        terminated: bool = False,
        truncated: bool = False,
        env_index: int = 0,
        id_: str | None = None,
        t_started: int = 0,
    ) -> Episode:
        """Build an episode (or chunk) from whole lists: one more observation than actions."""
        if len(observations) != len(actions) + 1 or len(rewards) != len(actions):
            raise ValueError(
                f"an episode needs one observation more than actions and one reward per "
                f"action, got {len(observations)} observations, {len(actions)} actions and "
                f"{len(rewards)} rewards"
            )
        episode = cls(env_index, id_, t_started)
        episode.observations = observations
        episode.actions = actions
        episode.rewards = rewards
        episode.infos = infos
        episode.is_terminated = terminated
        episode.is_truncated = truncated
        episode._return = float(sum(rewards))
        return episode

    # --- building (the runner's side) ---------------------------------------------------

    def add_reset(self, observation: Any, info: dict[str, Any]) -> None:
        """Record the first observation, from the env's reset."""
        self.observations.append(observation)
        self.infos.append(info)

    def add_step(
        self,
        observation: Any,
        action: Any,
        reward: float,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
    ) -> None:
        """Record one env step: the action taken and what the env returned for it."""
        self.observations.append(observation)
        self.actions.append(action)
        self.rewards.append(reward)
        self.infos.append(info)
        self._return += reward
        self.is_terminated = terminated
        self.is_truncated = truncated

    def truncate(self) -> None:
        """Mark the episode truncated now (``Control.end_episode``): its last step is final."""
        self.is_terminated, self.is_truncated = False, True

    def chunk(self, start: int) -> Episode:
        """Return a copy of the steps from ``start`` on (``start`` is a step index)."""
        part = Episode(self.env_index, self.id_, self.t_started + start)
        part.agent_id, part.module_id = self.agent_id, self.module_id
        part.observations = self.observations[start:]
        part.actions = self.actions[start:]
        part.rewards = self.rewards[start:]
        part.infos = self.infos[start:]
        part.is_terminated, part.is_truncated = self.is_terminated, self.is_truncated
        part.custom_data = self.custom_data
        part._return = float(sum(part.rewards))
        return part

    # --- reading (the callbacks' side) --------------------------------------------------

    def __len__(self) -> int:
        """Return the number of env steps (actions) in the episode."""
        return len(self.actions)

    def get_return(self) -> float:
        """Return the sum of the rewards."""
        return self._return

    @property
    def is_done(self) -> bool:
        """Whether the episode terminated or was truncated."""
        return self.is_terminated or self.is_truncated

    def get_observations(self, indices: Indices = None) -> Any:
        """Return observations: all (stacked), one (an int, negative from the end) or a slice."""
        return _gather(self.observations, indices)

    def get_actions(self, indices: Indices = None) -> Any:
        """Return actions, indexed like ``get_observations``."""
        return _gather(self.actions, indices)

    def get_rewards(self, indices: Indices = None) -> Any:
        """Return rewards, indexed like ``get_observations``."""
        return _gather(self.rewards, indices)

    def get_infos(self, indices: Indices = None) -> Any:
        """Return info dicts (a list, or one dict for an int index)."""
        return _gather(self.infos, indices, stack=False)

    def set_rewards(self, rewards: Any, at_indices: Indices = None) -> None:
        """Replace rewards (all, or those at ``at_indices``), e.g. in on_postprocess_trajectory."""
        values = np.asarray(rewards, dtype=float).ravel().tolist()
        if at_indices is None:
            positions = list(range(len(self.rewards)))
        elif isinstance(at_indices, int):
            positions = [at_indices]
        elif isinstance(at_indices, slice):
            positions = list(range(len(self.rewards)))[at_indices]
        else:
            positions = list(at_indices)
        if len(values) != len(positions):
            raise ValueError(
                f"set_rewards got {len(values)} rewards for {len(positions)} positions"
            )
        for position, value in zip(positions, values, strict=True):
            self.rewards[position] = value
        self._return = float(sum(self.rewards))

    def __repr__(self) -> str:
        state = (
            "terminated" if self.is_terminated else "truncated" if self.is_truncated else "ongoing"
        )
        return (
            f"Episode(id_={self.id_!r}, env_index={self.env_index}, len={len(self)}, "
            f"return={self._return:g}, {state})"
        )


SingleAgentEpisode = Episode
"""RLlib's name for a single-agent episode (``MultiAgentEpisode.agent_episodes`` holds them)."""


def _gather(items: list[Any], indices: Indices, *, stack: bool = True) -> Any:
    if isinstance(indices, int):
        return items[indices]
    if indices is None:
        picked = items
    elif isinstance(indices, slice):
        picked = items[indices]
    else:
        picked = [items[i] for i in indices]
    if not stack:
        return list(picked)
    try:
        return np.asarray(picked) if picked else np.empty((0,))
    except ValueError:  # ragged or structured (Dict spaces): keep the list
        return list(picked)
