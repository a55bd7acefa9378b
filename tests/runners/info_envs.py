"""A CartPole whose infos say where the cart is, and a plain callback that reads the same
thing itself: InfoMetrics' tests in hookbus's runners and through both bridges.

Framework-free (gymnasium and hookbus only) and module-level, so that RLlib, SB3 and a
replay can all use them.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from hookbus.kernel import Callback


class InfoCartPole(gym.Wrapper):  # type: ignore[type-arg]
    """CartPole-v1 whose step infos add ``x_position`` (the cart's position, ``obs[0]``, a
    float) and ``is_success`` (whether the cart is right of the centre, a bool).

    Takes an optional config (RLlib and hookbus pass their env config), which it ignores.
    """

    def __init__(self, config: Any = None) -> None:
        super().__init__(gym.make("CartPole-v1"))

    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = self.env.step(action)
        info = {**info, "x_position": float(obs[0]), "is_success": bool(obs[0] > 0.0)}
        return obs, reward, terminated, truncated, info


class FinalPositions(Callback):
    """The tests' own reading, beside InfoMetrics': each ended episode's final cart position
    from its last observation (each agent's, multi-agent), what its last info says, and how
    many episodes had ended at each train result (or SB3 log dump)."""

    def __init__(self) -> None:
        super().__init__()
        self.positions: list[float] = []
        """From the final observations."""
        self.infos: list[tuple[Any, Any]] = []
        """``(x_position, is_success)`` from the last infos."""
        self.at_result: list[int] = []
        """``len(positions)`` at each ``on_train_result``."""

    def on_episode_end(self, *, episode: Any, **kwargs: Any) -> None:
        for agent in getattr(episode, "agent_episodes", {None: episode}).values():
            self.positions.append(float(agent.get_observations(-1)[0]))
            info = agent.get_infos(-1)
            self.infos.append((info["x_position"], info["is_success"]))

    def on_train_result(self, **kwargs: Any) -> None:
        self.at_result.append(len(self.positions))

    def check_infos(self) -> None:
        """Assert that every last info held what the env put there at the final step.

        (A gymnasium vector env hands infos over as arrays: values may be numpy's.)
        """
        assert self.infos == [(x, x > 0.0) for x in self.positions]
        assert all(isinstance(s, bool | np.bool_) for _, s in self.infos)


def reduced(values: list[float], window: int) -> dict[str, float]:
    """Return numpy's mean, min, max and sum of the last ``window`` of ``values``."""
    last = np.asarray(values[-window:], dtype=np.float64)
    return {
        "mean": float(np.mean(last)),
        "min": float(np.min(last)),
        "max": float(np.max(last)),
        "sum": float(np.sum(last)),
    }
