"""RLlib-style code on worker processes: the runners' sync API in foreach functions.

Run: ``python docs/examples/rllib_runner_api.py``. docs/runners.md ("The runner's sync API")
describes it. Everything below is written as for RLlib: a custom evaluation function that
sends a lambda calling ``worker.sample()`` and ``worker.get_metrics()`` through
``foreach_env_runner(func=...)`` and returns RLlib's ``(metrics, env_steps, agent_steps)``;
a sync ``on_train_result`` handler pinging every runner; a sync ``training_step()``
override calling ``super().training_step()``.
"""

from __future__ import annotations

from typing import Any

from hookbus.runners import PPO, PPOConfig


def custom_eval(algorithm: Any, eval_workers: Any) -> tuple[dict[str, Any], int, int]:
    results = eval_workers.foreach_env_runner(
        func=lambda worker: (worker.sample(num_episodes=2), worker.get_metrics()),
        local_env_runner=False,
    )
    episodes = [episode for sampled, _ in results for episode in sampled]
    algorithm.metrics.aggregate(
        [metrics for _, metrics in results], key=("evaluation", "env_runners")
    )
    env_steps = sum(episode.env_steps() for episode in episodes)
    agent_steps = sum(episode.agent_steps() for episode in episodes)
    return {"eval_episodes": len(episodes)}, env_steps, agent_steps


def ping_every_runner(*, algorithm: Any, result: dict[str, Any]) -> None:
    # A sync handler of an Algorithm-side hook runs in a worker thread: it may wait for
    # the worker processes.
    result["pongs"] = algorithm.env_runner_group.foreach_env_runner(lambda w: w.ping())


class MyPPO(PPO):
    def training_step(self) -> None:  # RLlib's sync form, overridden as in RLlib
        super().training_step()
        self.metrics.log_value("my_training_steps", 1, reduce="sum")


class MyPPOConfig(PPOConfig):
    algo_class = MyPPO


if __name__ == "__main__":  # worker processes import this script: guard the training
    config = (
        MyPPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_env_runners=2, backend="process")
        .training(train_batch_size=400, minibatch_size=100, num_epochs=2)
        .evaluation(
            evaluation_interval=1,
            evaluation_num_env_runners=2,
            custom_evaluation_function=custom_eval,
        )
        .callbacks(on_train_result=ping_every_runner)
        .debugging(seed=0)
    )
    with config.build() as algo:
        for _ in range(2):
            result = algo.train()
            print(
                f"iteration {result['training_iteration']}: "
                f"my_training_steps {result['my_training_steps']}, "
                f"eval episodes {result['evaluation']['eval_episodes']}, "
                f"pongs {result['pongs']}"
            )
