"""Evaluate greedily on two evaluation runners, in parallel with each training step."""

from __future__ import annotations

import math
from typing import Any

from hookbus.kernel import Callback
from hookbus.runners import PPOConfig


class BestSoFar(Callback):
    """Mark each evaluation round that beats every earlier one (an edit the result keeps)."""

    def __init__(self) -> None:
        super().__init__()
        self.best = -math.inf

    def on_evaluate_end(self, *, evaluation_metrics: dict[str, Any], **kwargs: Any) -> None:
        mean = evaluation_metrics["env_runners"]["episode_return_mean"]
        evaluation_metrics["is_best"] = mean > self.best
        self.best = max(self.best, mean)


if __name__ == "__main__":
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .training(train_batch_size=1000, minibatch_size=128, num_epochs=6)
        .evaluation(
            evaluation_interval=1,  # a round every train()
            evaluation_duration=10,  # of exactly 10 episodes, 5 per runner
            evaluation_num_env_runners=2,
            evaluation_parallel_to_training=True,  # train(i -> i+1) + eval(i)
            evaluation_config={"explore": False},  # act greedily when evaluating
        )
        .callbacks(BestSoFar)
        .debugging(seed=0)
    )
    with config.build() as algo:
        for _ in range(6):
            result = algo.train()
            evaluation = result["evaluation"]
            i = result["training_iteration"]
            print(
                f"iteration {i}: training return "
                f"{result['env_runners']['episode_return_mean']:6.1f} | greedy return "
                f"{evaluation['env_runners']['episode_return_mean']:6.1f} over "
                f"{evaluation['env_runners']['num_episodes']} episodes, weights of iteration "
                f"{i - 1}{'  (best so far)' if evaluation['is_best'] else ''}"
            )
        by_hand = algo.evaluate()  # a round on the latest weights, hooks and all
        print(
            f"algo.evaluate(): greedy return {by_hand['env_runners']['episode_return_mean']:.1f} "
            f"on the weights of iteration {algo.training_iteration}; "
            f"healthy evaluation runners: {by_hand['num_healthy_workers']}"
        )
