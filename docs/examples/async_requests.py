"""RLlib's asynchronous calls: start work on the worker processes, collect it later.

Run: ``python docs/examples/async_requests.py``. docs/runners.md describes
``foreach_env_runner_async`` and ``fetch_ready_async_reqs``. Each of two worker processes
samples a few episodes while the driver trains the learner; an ``on_train_result`` handler
collects what has come back and starts the next round, the way RLlib code that overlaps
sampling with other work is written.
"""

from __future__ import annotations

from typing import Any

from hookbus.runners import PPOConfig


def episode_returns(worker: Any) -> list[float]:
    episodes = worker.sample(num_episodes=3, random_actions=True)
    return [episode.get_return() for episode in episodes if episode.is_done]


def collect_and_resend(*, algorithm: Any, result: dict[str, Any]) -> None:
    group = algorithm.env_runner_group
    ready = group.fetch_ready_async_reqs(tags="probe")  # what is there now; never waits
    result["probe_returns"] = dict(ready)  # worker index: its returns
    group.foreach_env_runner_async(episode_returns, "probe")  # busy runners are skipped


def main() -> None:
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_env_runners=2, backend="process")
        .training(train_batch_size=400, minibatch_size=100, num_epochs=2)
        .callbacks(on_train_result=collect_and_resend)
        .debugging(seed=0)
    )
    with config.build() as algo:
        started = algo.env_runner_group.foreach_env_runner_async(episode_returns, "probe")
        print(f"started {started} probes on the worker processes")
        for _ in range(3):
            result = algo.train()
            print(
                f"iteration {result['training_iteration']}: probes back from workers "
                f"{sorted(result['probe_returns'])}"
            )
        # Whatever is still out: wait for it before stopping.
        late = algo.env_runner_group.fetch_ready_async_reqs(tags="probe", timeout_seconds=None)
        print(
            f"last probes: {len(late)}; in flight now: "
            f"{algo.env_runner_group.num_in_flight_async_reqs()}"
        )


if __name__ == "__main__":
    main()
