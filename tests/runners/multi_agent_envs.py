"""Small multi-agent envs for tests: agents taking turns, an agent leaving early.

Module-level classes, so that they pickle to worker processes.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from hookbus.runners import MultiAgentEnv, RLModule

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


class TargetGame(MultiAgentEnv):
    """Two players, agents 0 and 1, see one target of ``size`` (one-hot) and each name one.

    One step per episode: the one who named it wins (reward 1, the other -1); if both or
    neither did, a coin decides. A player who names the target with probability a beats one
    who does with b with probability 0.5 + (a - b) / 2: self-play has room to improve.
    """

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.size = int((config or {}).get("size", 5))
        space = gym.spaces.Box(0.0, 1.0, (self.size,), np.float32)
        self.possible_agents = [0, 1]
        self.agents = [0, 1]
        self.observation_spaces = {0: space, 1: space}
        self.action_spaces = {0: gym.spaces.Discrete(self.size), 1: gym.spaces.Discrete(self.size)}
        self._rng = np.random.default_rng()
        self.target = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[Any, Any], dict[Any, Any]]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.target = int(self._rng.integers(self.size))
        obs = np.zeros(self.size, np.float32)
        obs[self.target] = 1.0
        return {0: obs, 1: obs.copy()}, {}

    def step(self, action_dict: dict[Any, Any]) -> Any:
        hits = [int(action_dict[agent]) == self.target for agent in (0, 1)]
        winner = hits.index(True) if hits[0] != hits[1] else int(self._rng.integers(2))
        rewards = {winner: 1.0, 1 - winner: -1.0}
        return {}, rewards, {"__all__": True}, {"__all__": False}, {}


class AlwaysZero(RLModule):
    """A heuristic module of the user's own: it always names 0 (only forward_inference)."""

    def forward_inference(self, obs: np.ndarray, /) -> np.ndarray:
        return np.zeros(len(obs), dtype=np.int64)


def main_vs_opponent(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    """Agent 0 plays "main", agent 1 "opponent"."""
    return "main" if agent_id == 0 else "opponent"
