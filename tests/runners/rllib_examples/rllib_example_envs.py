"""Envs that RLlib's example scripts import from ``ray.rllib.examples.envs.classes``.

Written here to the same contract (constructor config, spaces, rewards, the methods the
scripts call), so the ported scripts only change the import line.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium.envs.classic_control import CartPoleEnv

from hookbus.runners import MultiAgentEnv, make_multi_agent


class SimpleCorridor(gym.Env[np.ndarray, int]):
    """Walk right along a corridor: -0.01 a step, 1.0 on reaching its end.

    ``env_config={"corridor_length": n}`` (default 10); ``set_corridor_length(n)`` changes
    it between episodes (RLlib's custom evaluation example does).
    """

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        config = config or {}
        self.action_space = gym.spaces.Discrete(2)
        self.observation_space = gym.spaces.Box(0.0, 999.0, shape=(1,), dtype=np.float32)
        self.set_corridor_length(config.get("corridor_length", 10))
        self._position = 0.0

    def set_corridor_length(self, length: int) -> None:
        if length > 999:
            raise ValueError(f"corridor_length {length!r} is above the most allowed, 999")
        self.end_pos = length

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self._position = 0.0
        return self._observation(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if action == 1:
            self._position += 1.0
        elif self._position > 0:
            self._position -= 1.0
        done = self._position >= self.end_pos
        return self._observation(), 1.0 if done else -0.01, done, False, {}

    def _observation(self) -> np.ndarray:
        return np.array([self._position], np.float32)


class EnvError(Exception):
    """What the crashing env raises (RLlib's ``ray.rllib.utils.error.EnvError``)."""


class CartPoleCrashing(CartPoleEnv):
    """CartPole that crashes (raises) or stalls (sleeps) at random, as RLlib's example env.

    Config keys, as RLlib's: ``p_crash`` (per step, default 0.005), ``p_crash_reset``,
    ``crash_on_worker_indices``, ``p_stall``, ``p_stall_reset``, ``stall_time_sec`` (a
    number or a ``(low, high)`` range), ``stall_on_worker_indices``, ``init_time_s``.
    """

    def __init__(self, config: Any = None) -> None:
        super().__init__()
        self.config = config if config is not None else {}
        cfg = self.config
        worker = getattr(cfg, "worker_index", 0)
        crashes = not cfg.get("crash_on_worker_indices") or worker in cfg["crash_on_worker_indices"]
        stalls = not cfg.get("stall_on_worker_indices") or worker in cfg["stall_on_worker_indices"]
        self.p_crash = cfg.get("p_crash", 0.005) if crashes else 0.0
        self.p_crash_reset = cfg.get("p_crash_reset", 0.0) if crashes else 0.0
        self.p_stall = cfg.get("p_stall", 0.0) if stalls else 0.0
        self.p_stall_reset = cfg.get("p_stall_reset", 0.0) if stalls else 0.0
        self.stall_time_sec = cfg.get("stall_time_sec") or 0.0
        self._rng = np.random.default_rng()
        time.sleep(cfg.get("init_time_s", 0.0))

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        self._maybe_fail(self.p_crash_reset, self.p_stall_reset, "reset()")
        return super().reset(seed=seed, options=options)

    def step(self, action: Any) -> Any:
        self._maybe_fail(self.p_crash, self.p_stall, "step()")
        return super().step(action)

    def _maybe_fail(self, p_crash: float, p_stall: float, where: str) -> None:
        if self._rng.random() < p_crash:
            worker = getattr(self.config, "worker_index", 0)
            raise EnvError(f"simulated crash in {where} on worker {worker}")
        if self._rng.random() < p_stall:
            low_high = self.stall_time_sec
            seconds = self._rng.uniform(*low_high) if isinstance(low_high, tuple) else low_high
            time.sleep(seconds)


MultiAgentCartPoleCrashing = make_multi_agent(lambda config: CartPoleCrashing(config))


class CartPoleWithDictObservationSpace(CartPoleEnv):
    """CartPole whose observation is a nested Dict holding the same four numbers.

    As RLlib's example env: ``{"x-pos": Box(1,), "angular-pos": {"value": Box(()),
    "some_random_stuff": Discrete(3)}, "velocs": (Box(1,), Box(()))}``, a Dict within the
    Dict, a Tuple, shapes (1,) and (), and one Discrete that carries only noise.
    """

    def __init__(self, config: Any = None) -> None:
        super().__init__()
        low, high = self.observation_space.low, self.observation_space.high
        box = gym.spaces.Box
        self.observation_space = gym.spaces.Dict(
            {
                "x-pos": box(low[0], high[0], (1,), dtype=np.float32),
                "angular-pos": gym.spaces.Dict(
                    {
                        "value": box(low[2], high[2], (), dtype=np.float32),
                        "some_random_stuff": gym.spaces.Discrete(3),
                    }
                ),
                "velocs": gym.spaces.Tuple(
                    [
                        box(low[1], high[1], (1,), dtype=np.float32),
                        box(low[3], high[3], (), dtype=np.float32),
                    ]
                ),
            }
        )

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        observation, info = super().reset(seed=seed, options=options)
        return self._as_dict(observation), info

    def step(self, action: Any) -> Any:
        observation, reward, terminated, truncated, info = super().step(action)
        return self._as_dict(observation), reward, terminated, truncated, info

    def _as_dict(self, cartpole: np.ndarray) -> dict[str, Any]:
        # CartPole's observation: x, x-velocity, angle, angular velocity.
        return {
            "x-pos": np.array([cartpole[0]], np.float32),
            "angular-pos": {
                "value": np.array(cartpole[2], np.float32),
                "some_random_stuff": int(self.np_random.integers(3)),
            },
            "velocs": (
                np.array([cartpole[1]], np.float32),
                np.array(cartpole[3], np.float32),
            ),
        }


MultiAgentCartPoleWithDictObservationSpace = make_multi_agent(
    lambda config: CartPoleWithDictObservationSpace(config)
)

# Pendulum once per agent (agent ids 0, 1, ...), as RLlib's multi-agent example envs.
MultiAgentPendulum = make_multi_agent("Pendulum-v1")


class TicTacToe(MultiAgentEnv):
    """Two players take turns on a 3x3 board; only the player to move is observed.

    Observations ``Box(-1, 1, (9,))`` (1: player1's piece, -1: player2's), actions
    ``Discrete(9)``; a move onto a taken field costs 5 and changes nothing; three in a row
    wins +5 (the loser gets -5); a full board ends the game.
    """

    LINES: ClassVar[tuple[tuple[int, int, int], ...]] = (
        (0, 1, 2),
        (3, 4, 5),
        (6, 7, 8),
        (0, 3, 6),
        (1, 4, 7),
        (2, 5, 8),
        (0, 4, 8),
        (2, 4, 6),
    )

    def __init__(self, config: Any = None) -> None:
        super().__init__()
        self.agents = self.possible_agents = ["player1", "player2"]
        box = gym.spaces.Box(-1.0, 1.0, (9,), np.float32)
        self.observation_spaces = {"player1": box, "player2": box}
        self.action_spaces = {"player1": gym.spaces.Discrete(9), "player2": gym.spaces.Discrete(9)}
        self.board = [0] * 9
        self.current_player = "player1"
        self._rng = np.random.default_rng()

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.board = [0] * 9
        self.current_player = self.agents[int(self._rng.integers(2))]
        return {self.current_player: np.array(self.board, np.float32)}, {}

    def step(self, action_dict: dict[str, Any]) -> Any:
        player = self.current_player
        opponent = "player2" if player == "player1" else "player1"
        field = int(action_dict[player])
        rewards = {player: 0.0}
        done = False
        if self.board[field] != 0:
            rewards[player] = -5.0
        else:
            self.board[field] = 1 if player == "player1" else -1
            mine = self.board[field]
            if any(all(self.board[i] == mine for i in line) for line in self.LINES):
                rewards[player], rewards[opponent], done = 5.0, -5.0, True
            elif 0 not in self.board:
                done = True
        self.current_player = opponent
        observation = {opponent: np.array(self.board, np.float32)}
        return observation, rewards, {"__all__": done}, {}, {}


class RockPaperScissors(MultiAgentEnv):
    """Two players move at once for 10 rounds; each observes the other's last move.

    ``env_config={"sheldon_cooper_mode": True}`` adds lizard (3) and Spock (4). A round's
    winner gets +1, its loser -1.
    """

    BEATS: ClassVar[dict[int, set[int]]] = {
        0: {2, 3},
        1: {0, 4},
        2: {1, 3},
        3: {1, 4},
        4: {0, 2},
    }  # what each move beats

    def __init__(self, config: Any = None) -> None:
        super().__init__()
        self.agents = self.possible_agents = ["player1", "player2"]
        moves = 5 if (config or {}).get("sheldon_cooper_mode") else 3
        space = gym.spaces.Discrete(moves)
        self.observation_spaces = {"player1": space, "player2": space}
        self.action_spaces = {"player1": space, "player2": space}
        self.num_moves = 0

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        self.num_moves = 0
        return {"player1": 0, "player2": 0}, {}

    def step(self, action_dict: dict[str, Any]) -> Any:
        self.num_moves += 1
        move1, move2 = int(action_dict["player1"]), int(action_dict["player2"])
        first_wins = move2 in self.BEATS[move1]
        second_wins = move1 in self.BEATS[move2]
        reward = float(first_wins) - float(second_wins)
        observations = {"player1": move2, "player2": move1}
        rewards = {"player1": reward, "player2": -reward}
        return observations, rewards, {"__all__": self.num_moves >= 10}, {}, {}


def resize(image: np.ndarray, height: int, width: int) -> np.ndarray:
    """Scale an HxWxC image to ``height`` x ``width`` (nearest pixel).

    What the rendering examples import from ``ray.rllib.utils.images`` (there with OpenCV).
    """
    rows = np.arange(height) * image.shape[0] // height
    cols = np.arange(width) * image.shape[1] // width
    return image[rows][:, cols]
