"""Plug your own learner into an Algorithm: hill climbing on a linear CartPole policy.

A learner is any class built as ``Learner(config, observation_space, action_space)`` that
fits the ``hookbus.runners.Learner`` Protocol: a ``module`` (an ``RLModule``:
``forward_exploration(obs, rng)`` / ``forward_inference(obs)`` / ``get_state()`` /
``set_state()``), ``update(episodes) -> dict`` of stats, and ``get_state()`` /
``set_state()`` for checkpoints. Nothing needs subclassing; the two checks at the end let
mypy confirm the fit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from hookbus.runners import PPOConfig


class LinearPolicy:
    """Pick the action with the largest ``obs @ weights``."""

    def __init__(self, obs_dim: int, num_actions: int) -> None:
        self.weights = np.zeros((obs_dim, num_actions))

    def forward_exploration(self, obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.forward_inference(obs)  # exploration comes from the weight noise

    def forward_inference(self, obs: np.ndarray) -> np.ndarray:
        return np.argmax(obs @ self.weights, axis=1)

    def get_state(self) -> dict[str, Any]:
        return {"weights": self.weights.copy()}

    def set_state(self, state: dict[str, Any]) -> None:
        self.weights = np.array(state["weights"])


class HillClimbing:
    """Keep the best weights so far; try a random perturbation of them every iteration."""

    def __init__(self, config: Any, observation_space: Any, action_space: Any) -> None:
        self.rng = np.random.default_rng(config.seed)
        self.module = LinearPolicy(observation_space.shape[0], action_space.n)
        self.best_weights = self.rng.normal(size=self.module.weights.shape)
        self.best_return = -np.inf
        self.module.weights = self.best_weights.copy()

    def update(self, episodes: list[Any]) -> dict[str, float]:
        finished = [e.get_return() for e in episodes if e.is_done and e.t_started == 0]
        score = float(np.mean(finished)) if finished else 0.0
        if score >= self.best_return:
            self.best_return, self.best_weights = score, self.module.weights.copy()
        noise = self.rng.normal(scale=0.5, size=self.best_weights.shape)
        self.module.weights = self.best_weights + noise
        return {"best_return": self.best_return, "tried_return": score}

    def get_state(self) -> dict[str, Any]:
        return {
            "best": self.best_weights,
            "best_return": self.best_return,
            "module": self.module.get_state(),
        }

    def set_state(self, state: dict[str, Any]) -> None:
        self.best_weights, self.best_return = state["best"], state["best_return"]
        self.module.set_state(state["module"])


if TYPE_CHECKING:  # mypy checks that the classes fit hookbus's Protocols
    from hookbus.runners import Learner, RLModule

    _module: type[RLModule] = LinearPolicy
    _learner: type[Learner[list[Any]]] = HillClimbing


if __name__ == "__main__":
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .training(learner_class=HillClimbing, train_batch_size=2000)
        .debugging(seed=0)
    )
    with config.build() as algo:
        for _ in range(8):
            result = algo.train()
        stats = result["learners"]["default_policy"]
        print(
            f"after {result['training_iteration']} iterations: best return "
            f"{stats['best_return']:.1f}, last tried {stats['tried_return']:.1f}"
        )
