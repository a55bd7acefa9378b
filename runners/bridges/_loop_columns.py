"""A vector env's steps kept as arrays while nobody listens per step: ``Columns``.

With no ``on_episode_step`` subscriber, nothing needs an episode between its start and
its end, so ``LoopEpisodes`` writes each vector step into these columns (row ``t`` of each
array is vector step ``t``: the observations, actions and rewards of every sub-env, one
numpy assignment each, which is also the copy the episodes keep) and hands a sub-env's
rows to its ``Episode`` in one block (``Episode.add_steps``) only when the episode ends, a
reset leaves it, or per-step publishing begins. Python runs per sub-env only where
something happens. The EnvRunners' columnar loop (``env_runner/_columns.py``) does the
same within one ``sample()`` call; a loop of one's own has no such call, so these columns
also forget the rows every episode has taken: when full, the rows still pending move to
new arrays (episodes keep views of the old ones, which live as long as those episodes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..episodes import Episode

__all__ = ("Columns",)

_FIRST_CAPACITY = 256
"""Vector steps the columns hold at first (then twice what is pending, at least this)."""


class Columns:
    """``num_envs`` sub-envs' pending steps, as rows of arrays (module docstring).

    ``starts[i]`` is the row of sub-env ``i``'s first step not yet in its episode;
    ``infos[i]`` its non-empty infos by row (most steps of most envs have none).
    """

    __slots__ = ("actions", "infos", "observations", "rewards", "starts", "t")

    def __init__(self, num_envs: int) -> None:
        self.observations: Any = None
        self.actions: Any = None
        self.rewards: Any = None
        self.t = 0
        """The row the next vector step goes to."""
        self.starts = [0] * num_envs
        self.infos: list[dict[int, dict[str, Any]]] = [{} for _ in range(num_envs)]

    def fits(self, observations: Any, actions: Any) -> bool:
        """Tell whether a step's arrays go into these columns as they are (same dtypes and
        shapes as the first step's); False means: bring the episodes up to date, then
        ``clear()``, before ``put()``."""
        columns = self.observations
        if columns is None:
            return True
        held = self.actions
        return bool(
            observations.dtype == columns.dtype
            and observations.shape == columns.shape[1:]
            and actions.dtype == held.dtype
            and actions.shape == held.shape[1:]
        )

    def full(self) -> bool:
        """Tell whether the next ``put()`` needs a ``regrow()`` first."""
        return self.observations is not None and self.t == len(self.observations)

    def put(self, observations: Any, actions: Any, rewards: Any) -> int:
        """Write one vector step into the next row (there is room) and return the row."""
        t = self.t
        if self.observations is None:
            self._make(observations, actions, _FIRST_CAPACITY)
        self.observations[t] = observations
        self.actions[t] = actions
        self.rewards[t] = rewards
        self.t = t + 1
        return t

    def hand(self, i: int, end: int, episode: Episode, terminated: bool, truncated: bool) -> None:
        """Add sub-env ``i``'s rows from its start to ``end`` (excluded) to ``episode``
        (``Episode.add_steps``, the last step's flags given), and start it at ``end``."""
        start, self.starts[i] = self.starts[i], end
        infos = self.infos[i]
        rows = (self.observations[start:end, i], self.actions[start:end, i])
        rewards = self.rewards[start:end, i]
        if not infos:
            episode.add_steps(*rows, rewards, None, terminated, truncated)
        elif len(infos) == 1 and end - 1 in infos:  # the last step's only (an end's stats)
            last = end - 1 - start
            episode.add_steps(rows[0][:last], rows[1][:last], rewards[:last], None, False, False)
            info = [infos.pop(end - 1)]
            episode.add_steps(
                rows[0][last:], rows[1][last:], rewards[last:], info, terminated, truncated
            )
        else:
            listed = [infos.pop(row, {}) for row in range(start, end)]
            episode.add_steps(*rows, rewards, listed, terminated, truncated)

    def clear(self) -> None:
        """Forget the arrays (every episode has its rows): the next step makes new ones."""
        self.observations = self.actions = self.rewards = None
        self.t = 0
        self.starts = [0] * len(self.starts)
        for infos in self.infos:
            infos.clear()

    def _make(self, observations: Any, actions: Any, capacity: int) -> None:
        n = len(observations)
        self.observations = np.empty((capacity, *observations.shape), observations.dtype)
        self.actions = np.empty((capacity, *actions.shape), actions.dtype)
        self.rewards = np.empty((capacity, n), np.float64)

    def regrow(self, pending: list[int]) -> None:
        """Move the rows still needed to new arrays (twice as many rows as those, at least
        the first capacity). ``pending`` are the starts of the sub-envs whose steps are not
        all in their episodes: rows from the smallest on are needed."""
        keep = min(pending, default=self.t)
        kept = self.t - keep
        old = self.observations, self.actions, self.rewards
        self._make(old[0][0], old[1][0], max(_FIRST_CAPACITY, 2 * kept))
        for new, rows in zip((self.observations, self.actions, self.rewards), old, strict=True):
            new[:kept] = rows[keep : self.t]
        self.starts = [max(start - keep, 0) for start in self.starts]
        self.infos = [
            {row - keep: info for row, info in infos.items() if row >= keep} for infos in self.infos
        ]
        self.t = kept
