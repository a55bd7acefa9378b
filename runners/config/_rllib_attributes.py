"""Config attributes RLlib's scripts read that are no setting of their own here.

``is_atari`` is answered as RLlib answers it; the deprecated names RLlib 2.40 still reads
and sets (``config.evaluation_num_workers``) work and warn with RLlib's sentence.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from .._deprecation import warn_deprecated
from ._settings import EnvironmentSettings

__all__ = ("DEPRECATED_ATTRIBUTES", "RLlibAttributes")

DEPRECATED_ATTRIBUTES: dict[str, str] = {
    "num_rollout_workers": "num_env_runners",
    "evaluation_num_workers": "evaluation_num_env_runners",
    "num_envs_per_worker": "num_envs_per_env_runner",
}
"""RLlib 2.40's deprecated config attributes (properties there), to the setting each is now."""


def _deprecated(old: str, new: str) -> property:
    def get(self: Any) -> Any:
        warn_deprecated(f"AlgorithmConfig.{old}", f"AlgorithmConfig.{new}")
        return getattr(self, new)

    def set_(self: Any, value: Any) -> None:  # called through AlgorithmConfig.__setattr__
        warn_deprecated(f"AlgorithmConfig.{old}", f"AlgorithmConfig.{new}", stacklevel=4)
        setattr(self, new, value)

    return property(get, set_, doc=f"Deprecated in RLlib: ``{new}``.")


class RLlibAttributes:
    """``is_atari`` as RLlib's, and RLlib 2.40's deprecated attribute names."""

    @property
    def is_atari(self) -> bool:
        """Whether the env is an Atari env: ``environment(is_atari=...)`` if set, else as
        RLlib decides (``AlgorithmConfig.is_atari``): False for an env that is not a
        string (a class, a creator), else whether the gymnasium env of that id is ALE's.
        No effect in hookbus, which has no Atari preprocessing."""
        value = self.settings(EnvironmentSettings).is_atari  # type: ignore[attr-defined]
        if value is not None:
            return bool(value)
        env = self.env  # type: ignore[attr-defined]
        return type(env) is str and _makes_atari_env(env)

    @is_atari.setter
    def is_atari(self, value: bool | None) -> None:
        self.environment(is_atari=value)  # type: ignore[attr-defined]


for _old, _new in DEPRECATED_ATTRIBUTES.items():
    setattr(RLlibAttributes, _old, _deprecated(_old, _new))


def _makes_atari_env(env: str) -> bool:
    """Make the env of id ``env`` and tell whether it is ALE's (RLlib's ``is_atari(env)``:
    image observations, an ``AtariEnv<ALE...>``); an id gymnasium cannot make is no Atari."""
    try:
        made = gym.make(env)
    except (gym.error.Error, ImportError):  # not a gymnasium id (RLlib: gym.error.Error)
        return False
    try:
        shape = getattr(made.observation_space, "shape", None)
        if shape is not None and len(shape) <= 2:
            return False
        return "AtariEnv<ALE" in str(made)
    finally:
        made.close()
