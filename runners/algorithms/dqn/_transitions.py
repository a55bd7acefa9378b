"""N-step transitions: episode chunks turned into the rows a replay buffer stores."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...episodes import Episode

__all__ = ("NStepTransitions",)


class NStepTransitions:
    """Turn episode chunks into rows of (n-step) transitions for a replay buffer.

    A row is ``obs``, ``actions``, ``rewards`` (the discounted sum of up to ``n_step``
    rewards), ``new_obs`` (the observation ``n_step`` steps later), ``terminateds`` (whether
    ``new_obs`` is terminal) and ``n_step`` (how many steps the row spans). Near an
    episode's end rows span fewer steps; a truncated episode's last rows bootstrap (they are
    not terminal). For ``n_step > 1`` the last steps of an ongoing chunk wait for that
    episode's next chunk, which every sampling round brings (each round steps every sub-env);
    steps whose episode sends nothing in the next call are dropped, so that episodes a runner
    abandoned (``force_reset``) leave nothing behind.
    """

    def __init__(self, n_step: int = 1, gamma: float = 0.99) -> None:
        """Build rows spanning ``n_step`` steps, discounting rewards by ``gamma``."""
        self.n_step = n_step
        self.gamma = gamma
        self.observations: Callable[[Any], NDArray[Any]] = np.asarray
        """Turns an episode's observations into the module's (the runner's env-to-module
        pipeline, set by the Algorithm): the buffer stores what the module takes."""
        # Episode id -> the observations, actions and rewards of its unfinished rows.
        self._pending: dict[str, tuple[list[Any], list[Any], list[float]]] = {}

    def __call__(self, episodes: Sequence[Episode]) -> dict[str, NDArray[Any]] | None:
        """Return the rows the chunks complete, by column (None if there are none)."""
        pending, self._pending = self._pending, {}
        parts = [p for ep in episodes if (p := self._rows(ep, pending)) is not None]
        if not parts:
            return None
        if len(parts) == 1:
            return parts[0]
        return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}

    def _rows(
        self, episode: Episode, pending: dict[str, tuple[list[Any], list[Any], list[float]]]
    ) -> dict[str, NDArray[Any]] | None:
        obs_list, actions, rewards = episode.observations, episode.actions, episode.rewards
        waiting = pending.get(episode.id_)
        if waiting is not None and episode.t_started > 0:
            # The waiting observations end with the one this chunk starts with.
            obs_list = waiting[0][:-1] + obs_list
            actions, rewards = waiting[1] + actions, waiting[2] + rewards
        t_len, n = len(actions), self.n_step
        if t_len == 0:
            return None
        if episode.is_done:
            emit = t_len
        else:
            emit = max(0, t_len - n + 1)
            if n > 1:
                self._pending[episode.id_] = (obs_list[emit:], actions[emit:], rewards[emit:])
            if emit == 0:
                return None
        obs = self.observations(obs_list)
        r = np.asarray(rewards, dtype=np.float32)
        if n == 1:
            n_rewards, span = r, np.ones(t_len, dtype=np.int32)
        else:
            span = np.minimum(n, t_len - np.arange(emit)).astype(np.int32)
            padded = np.concatenate([r, np.zeros(n, dtype=np.float32)])
            n_rewards = np.zeros(emit, dtype=np.float32)
            for j in range(n):  # rewards past the episode's end are the zero padding
                n_rewards += np.float32(self.gamma**j) * padded[j : j + emit]
        ends = np.arange(emit) + span
        terminateds = np.zeros(emit, dtype=bool)
        if episode.is_terminated:
            terminateds[ends == t_len] = True
        return {
            "obs": obs[:emit],
            "actions": np.asarray(actions[:emit]),
            "rewards": n_rewards[:emit],
            "new_obs": obs[ends],
            "terminateds": terminateds,
            "n_step": span[:emit],
        }

    def forget(self) -> None:
        """Drop the steps waiting for their episode's next chunk."""
        self._pending.clear()
