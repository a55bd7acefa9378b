"""Self-play, as RLlib's examples do it: "main" plays a random opponent, and whenever it wins
often enough a frozen copy of it joins the league (``algorithm.add_module`` from
``on_train_result``); main then plays the copies and keeps learning. A checkpoint keeps the
copies, and restores them into an Algorithm built from the original config."""

from __future__ import annotations

import tempfile
from typing import Any

import gymnasium as gym
import numpy as np

from hookbus.kernel import Callback
from hookbus.runners import (
    MultiAgentEnv,
    MultiRLModuleSpec,
    PPOConfig,
    RandomRLModule,
    RLModule,
    RLModuleSpec,
)

SIZE = 5


class NameTheTarget(MultiAgentEnv):
    """Players 0 and 1 see one target (one-hot) and each name one: one step per episode.

    Who named it wins (+1, the other -1); if both or neither did, a coin decides. A player
    right with probability a beats one right with probability b with 0.5 + (a - b) / 2.
    """

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        space = gym.spaces.Box(0.0, 1.0, (SIZE,), np.float32)
        self.agents = self.possible_agents = [0, 1]
        self.observation_spaces = {0: space, 1: space}
        self.action_spaces = {0: gym.spaces.Discrete(SIZE), 1: gym.spaces.Discrete(SIZE)}
        self.rng = np.random.default_rng()
        self.target = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.target = int(self.rng.integers(SIZE))
        obs = np.eye(SIZE, dtype=np.float32)[self.target]
        return {0: obs, 1: obs.copy()}, {}

    def step(self, action_dict: dict[Any, Any]) -> Any:
        hits = [int(action_dict[agent]) == self.target for agent in (0, 1)]
        winner = hits.index(True) if hits[0] != hits[1] else int(self.rng.integers(2))
        return {}, {winner: 1.0, 1 - winner: -1.0}, {"__all__": True}, {"__all__": False}, {}


class AlwaysZero(RLModule):
    """A heuristic opponent: a module of one's own needs only forward_inference."""

    def forward_inference(self, obs: np.ndarray, /) -> np.ndarray:
        return np.zeros(len(obs), dtype=np.int64)


def main_vs_random(agent_id: Any, episode: Any, **kwargs: Any) -> str:
    """Main plays agent 0 or 1, by episode; the other agent is "random"."""
    return "main" if hash(episode.id_) % 2 == agent_id else "random"


class SelfPlay(Callback):
    """Log main's win rate; add a frozen copy of main whenever it wins often enough."""

    def __init__(self) -> None:
        super().__init__()
        self.copies = 0

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        main_agent = 0 if episode.module_for(0) == "main" else 1
        won = episode.get_rewards()[main_agent][-1] == 1.0
        metrics_logger.log_value("win_rate", won, reduce="mean", window=100)

    def on_train_result(self, *, algorithm: Any, result: dict[str, Any], **kwargs: Any) -> None:
        if result["env_runners"]["win_rate"] > 0.65:
            self.copies += 1
            copies = self.copies

            def main_vs_copies(agent_id: Any, episode: Any, **kwargs: Any) -> str:
                opponent = f"main_v{np.random.randint(1, copies + 1)}"
                return "main" if hash(episode.id_) % 2 == agent_id else opponent

            main = algorithm.get_module("main")
            algorithm.add_module(
                module_id=f"main_v{copies}",
                module_spec=RLModuleSpec.from_module(main),
                new_agent_to_module_mapping_fn=main_vs_copies,
            )
            algorithm.set_state(
                {"learner_group": {"learner": {"rl_module": {f"main_v{copies}": main.get_state()}}}}
            )
        result["league_size"] = self.copies + 2


def config() -> PPOConfig:
    return (
        PPOConfig()
        .environment(NameTheTarget)
        .env_runners(num_env_runners=1)
        .multi_agent(
            policies={"main", "random", "zero"},
            policy_mapping_fn=main_vs_random,
            policies_to_train=["main"],
        )
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    "main": RLModuleSpec(model_config={"fcnet_hiddens": [64]}),
                    "random": RLModuleSpec(module_class=RandomRLModule),
                    "zero": RLModuleSpec(module_class=AlwaysZero),  # in the league, unused
                }
            )
        )
        .training(lr=3e-3, train_batch_size=400, minibatch_size=100, num_epochs=5)
        .debugging(seed=0)
    )


if __name__ == "__main__":
    with config().callbacks(SelfPlay()).build() as algo:
        for _ in range(30):
            result = algo.train()
            size, win_rate = result["league_size"], result["env_runners"]["win_rate"]
            iteration = result["training_iteration"]
            print(f"iteration {iteration}: league of {size}, win rate {win_rate:.2f}")
            if size >= 4:
                break
        path = algo.save_to_path(tempfile.mkdtemp())
        league = sorted(algo.get_weights())
    print("league:", league)
    with config().build() as fresh:  # the original config: no copies in it
        fresh.restore_from_path(path)
        print("restored:", sorted(fresh.get_weights()))
        assert sorted(fresh.get_weights()) == league
