"""Envs with every observation space the default pipeline takes, for tests and bench/.

Module level, so that worker processes (``backend="process"``) import them too.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from hookbus.kernel import Callback
from hookbus.runners import MultiAgentEnv


class DictCorridor(gym.Env[dict[str, Any], int]):
    """Walk a corridor to a goal: a Dict observation that only both keys together solve.

    ``{"agent": Discrete(n), "goal": Discrete(n), "time_left": Box(0, 1, (1,))}``; actions
    0 (left) and 1 (right); reward 1 on reaching the goal (the episode ends), else 0; the
    episode is truncated after ``n`` steps, enough for the farthest goal.
    """

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        self.n = int((config or {}).get("length", 8))
        self.observation_space = gym.spaces.Dict(
            {
                "goal": gym.spaces.Discrete(self.n),
                "agent": gym.spaces.Discrete(self.n),
                "time_left": gym.spaces.Box(0.0, 1.0, (1,), np.float32),
            }
        )
        self.action_space = gym.spaces.Discrete(2)
        self.agent = self.goal = self.t = 0

    def _obs(self) -> dict[str, Any]:
        left = np.array([1.0 - self.t / self.n], dtype=np.float32)
        return {"goal": self.goal, "agent": self.agent, "time_left": left}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        self.agent, self.goal = (int(x) for x in self.np_random.choice(self.n, 2, replace=False))
        self.t = 0
        return self._obs(), {}

    def step(self, action: int) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        self.t += 1
        self.agent = int(np.clip(self.agent + (1 if int(action) == 1 else -1), 0, self.n - 1))
        reached = self.agent == self.goal
        return self._obs(), float(reached), reached, self.t >= self.n and not reached, {}


class TupleEnv(gym.Env[tuple[Any, ...], Any]):
    """A Tuple observation (Discrete, Box (2, 2), MultiDiscrete) and MultiDiscrete actions.

    The reward is 1 when the first action component equals the observation's Discrete
    item: a policy reading the observation earns more than a random one.
    """

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        self.observation_space = gym.spaces.Tuple(
            (
                gym.spaces.Discrete(3),
                gym.spaces.Box(-1.0, 1.0, (2, 2), np.float32),
                gym.spaces.MultiDiscrete([2, 4]),
            )
        )
        self.action_space = gym.spaces.MultiDiscrete([3, 2])
        self.t = 0
        self._last: tuple[Any, ...] = ()

    def _draw(self) -> tuple[Any, ...]:
        self._last = self.observation_space.sample()
        return self._last

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        super().reset(seed=seed)
        self.observation_space.seed(int(self.np_random.integers(2**31)))
        self.t = 0
        return self._draw(), {}

    def step(self, action: Any) -> tuple[tuple[Any, ...], float, bool, bool, dict[str, Any]]:
        self.t += 1
        reward = float(int(action[0]) == int(self._last[0]))
        return self._draw(), reward, False, self.t >= 10, {}


class TextEnv(gym.Env[str, int]):
    """An observation space no module takes (Text)."""

    observation_space = gym.spaces.Text(5)
    action_space = gym.spaces.Discrete(2)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        return "a", {}

    def step(self, action: int) -> tuple[str, float, bool, bool, dict[str, Any]]:
        return "a", 0.0, True, False, {}


def observation_total(obs: Any) -> float:
    """Return the sum of every number in a (nested) observation: lists, tuples, dicts."""
    if isinstance(obs, dict):
        return sum(observation_total(v) for k, v in sorted(obs.items()))
    if isinstance(obs, list | tuple):
        return sum(observation_total(v) for v in obs)
    return float(np.sum(obs))


class ObservationTotals(Callback):
    """Log each episode's observations' total: equal live and replayed if both see the same."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        total = sum(observation_total(o) for o in episode.observations)
        metrics_logger.log_value("observation_total", total, reduce="sum")
        metrics_logger.log_value("episodes_checked", 1, reduce="sum")


class ScalarBox(gym.Env[np.ndarray, np.ndarray]):
    """A scalar Box observation (shape ``()``) and a one-dimensional Box action.

    The reward is minus the distance of the action to the observation; 10 steps.
    """

    observation_space = gym.spaces.Box(-1.0, 1.0, (), np.float32)
    action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        self.t = 0
        self._target = np.float32(0.0)

    def _draw(self) -> np.ndarray:
        self._target = np.float32(self.np_random.uniform(-1.0, 1.0))
        return np.array(self._target, dtype=np.float32)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        return self._draw(), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.t += 1
        reward = -abs(float(np.asarray(action).reshape(-1)[0]) - float(self._target))
        return self._draw(), reward, False, self.t >= 10, {}


def _frozen_lake(config: dict[str, Any] | None) -> gym.Env[Any, Any]:
    return gym.make("FrozenLake-v1", is_slippery=False)


class MultiAgentSpaces(MultiAgentEnv):
    """One agent per kind of space, each playing its own env; the episode ends with the last.

    ``"corridor"``: a Dict observation (``DictCorridor``), Discrete actions; ``"tuple"``: a
    Tuple observation and MultiDiscrete actions (``TupleEnv``); ``"scalar"``: a scalar Box
    and Box actions (``ScalarBox``); ``"lake"``: FrozenLake's Discrete cells. Agent ``k``'s
    env is seeded ``seed + k``.
    """

    MAKERS: ClassVar[dict[str, Any]] = {
        "corridor": DictCorridor,
        "tuple": TupleEnv,
        "scalar": ScalarBox,
        "lake": _frozen_lake,
    }

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.envs = {agent: make(config) for agent, make in self.MAKERS.items()}
        self.possible_agents = list(self.envs)
        self.agents = list(self.possible_agents)
        self.observation_spaces = {a: env.observation_space for a, env in self.envs.items()}
        self.action_spaces = {a: env.action_space for a, env in self.envs.items()}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        self.agents = list(self.possible_agents)
        observations, infos = {}, {}
        for k, (agent, env) in enumerate(self.envs.items()):
            observations[agent], infos[agent] = env.reset(seed=None if seed is None else seed + k)
        return observations, infos

    def step(self, action_dict: dict[str, Any]) -> Any:
        observations, rewards, terminateds, truncateds, infos = {}, {}, {}, {}, {}
        for agent, action in action_dict.items():
            obs, reward, terminated, truncated, info = self.envs[agent].step(action)
            observations[agent], rewards[agent], infos[agent] = obs, float(reward), info
            terminateds[agent], truncateds[agent] = bool(terminated), bool(truncated)
            if terminated or truncated:
                self.agents.remove(agent)
        terminateds["__all__"] = not self.agents
        truncateds["__all__"] = False
        return observations, rewards, terminateds, truncateds, infos


def agent_is_policy(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    """Map each agent to the policy of its name."""
    return str(agent_id)


class AgentObservationTotals(Callback):
    """Log each multi-agent episode's observations' total (agents in sorted order)."""

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        total = 0.0
        for agent_id in sorted(episode.agent_episodes, key=str):
            total += sum(
                observation_total(o) for o in episode.agent_episodes[agent_id].observations
            )
        metrics_logger.log_value("observation_total", total, reduce="sum")
        metrics_logger.log_value("episodes_checked", 1, reduce="sum")
