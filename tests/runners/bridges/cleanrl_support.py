"""What ``cleanrl_ppo.py`` (CleanRL's PPO, ported) imports besides its own libraries.

- ``SameModelSyncVectorEnv``: CleanRL's ``cleanrl_utils/same_model_vector_env.py``
  (vwxyzjn/cleanrl, pull request 502, "Upgrade gymnasium to 1.1.0", commit d32feb38; MIT
  licence), as it is: a ``SyncVectorEnv`` that resets a finished sub-env in the same step
  and puts ``final_obs``/``final_info`` in that step's infos, while it keeps the
  ``metadata["autoreset_mode"]`` of ``SyncVectorEnv``'s default, NEXT_STEP. The env a
  wrapper must read by what it does, not by what it declares.
- ``tyro``: CleanRL parses its ``Args`` dataclass with tyro, which the tests do not
  install; ``tyro.cli(Args)`` here gives ``Args()``, its defaults (the port's tiny sizes).
- ``EpisodeReturns``: the hookbus callback the port's one added line wraps the env with.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

import gymnasium as gym
import numpy as np

from hookbus.kernel import Callback


# Only for gymnasium v1.0.0
class SameModelSyncVectorEnv(gym.vector.SyncVectorEnv):
    def step(self, actions):  # type: ignore[no-untyped-def]
        observations, infos = [], {}
        for i, action in enumerate(gym.vector.utils.iterate(self.action_space, actions)):
            (
                _env_obs,
                self._rewards[i],
                self._terminations[i],
                self._truncations[i],
                env_info,
            ) = self.envs[i].step(action)

            if self._terminations[i] or self._truncations[i]:
                infos = self._add_info(
                    infos,
                    {"final_obs": _env_obs, "final_info": env_info},
                    i,
                )
                _env_obs, env_info = self.envs[i].reset()
            observations.append(_env_obs)
            infos = self._add_info(infos, env_info, i)

        # Concatenate the observations
        self._observations = gym.vector.utils.concatenate(
            self.single_observation_space, observations, self._observations
        )
        return (
            deepcopy(self._observations) if self.copy else self._observations,
            np.copy(self._rewards),
            np.copy(self._terminations),
            np.copy(self._truncations),
            infos,
        )


class tyro:  # stands in for the module of that name
    """``tyro.cli(Args)``: the dataclass's defaults (no command line is parsed)."""

    @staticmethod
    def cli(cls: type[Any]) -> Any:
        return cls()


class EpisodeReturns(Callback):
    """Each ended episode as hookbus saw it: in which vector step, which sub-env, its return.

    ``vector_step`` counts sub-env 0's steps: a same-step env steps every sub-env in every
    vector step, and sub-env 0's step is published first, so at any episode's end it is
    the number of the vector step that ended it (CleanRL's ``global_step / num_envs``).
    """

    def __init__(self) -> None:
        super().__init__()
        self.vector_step = 0
        self.ends: list[tuple[int, int, float]] = []
        """``(vector step, env_index, return)`` per ended episode, in order."""
        self.statistics: list[float] = []
        """What ``RecordEpisodeStatistics`` put in each episode's last info (``r``)."""

    def on_episode_step(self, *, env_index: int, **kwargs: Any) -> None:
        if env_index == 0:
            self.vector_step += 1

    def on_episode_end(self, *, episode: Any, env_index: int, **kwargs: Any) -> None:
        self.ends.append((self.vector_step, env_index, episode.get_return()))
        self.statistics.append(float(episode.get_infos(-1)["episode"]["r"]))
