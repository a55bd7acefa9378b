"""Small multi-agent envs for tests: agents taking turns, an agent leaving early.

Module-level classes, so that they pickle to worker processes.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from hookbus.runners import MultiAgentEnv

_OBS = gym.spaces.Box(-1.0, 100.0, (2,), np.float32)
_ACT = gym.spaces.Discrete(2)


def _obs(t: int, agent: int) -> np.ndarray:
    return np.array([t, agent], dtype=np.float32)


class TurnBasedEnv(MultiAgentEnv):
    """Agents "a" and "b" alternate, "a" first; each move rewards the mover 1 and the other
    0.5. The episode terminates after ``length`` moves (config), both agents with it."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.length = int((config or {}).get("length", 7))
        self.possible_agents = ["a", "b"]
        self.agents = ["a", "b"]
        self.observation_spaces = {"a": _OBS, "b": _OBS}
        self.action_spaces = {"a": _ACT, "b": _ACT}
        self.t = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[Any, Any], dict[Any, Any]]:
        self.t = 0
        return {"a": _obs(0, 0)}, {"a": {"turn": 0}}

    def step(self, action_dict: dict[Any, Any]) -> Any:
        (mover,) = action_dict  # exactly one agent acts per step
        other = "b" if mover == "a" else "a"
        self.t += 1
        done = self.t >= self.length
        rewards = {mover: 1.0, other: 0.5}
        observations = {} if done else {other: _obs(self.t, int(other == "b"))}
        infos = {} if done else {other: {"turn": self.t}}
        return observations, rewards, {"__all__": done}, {"__all__": False}, infos


class LeavingEnv(MultiAgentEnv):
    """Agents 0 and 1 act together; agent 1 leaves (terminated) after ``leave_at`` steps,
    agent 0 goes on until ``length`` steps (truncated). Rewards: agent i gets i + 1."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        config = config or {}
        self.length = int(config.get("length", 9))
        self.leave_at = int(config.get("leave_at", 4))
        self.possible_agents = [0, 1]
        self.agents = [0, 1]
        self.observation_spaces = {0: _OBS, 1: _OBS}
        self.action_spaces = {0: _ACT, 1: _ACT}
        self.t = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[Any, Any], dict[Any, Any]]:
        self.t = 0
        return {0: _obs(0, 0), 1: _obs(0, 1)}, {}

    def step(self, action_dict: dict[Any, Any]) -> Any:
        self.t += 1
        observations, rewards, terminateds = {}, {}, {}
        for agent in action_dict:
            observations[agent] = _obs(self.t, agent)
            rewards[agent] = float(agent + 1)
            terminateds[agent] = agent == 1 and self.t >= self.leave_at
        truncated = self.t >= self.length
        terminateds["__all__"] = False
        return observations, rewards, terminateds, {"__all__": truncated}, {}


def by_agent(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    """Map agent ``x`` to policy ``p<x>`` (a module-level function: it pickles)."""
    return f"p{agent_id}"
