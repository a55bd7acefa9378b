"""Port of RLlib's rllib/examples/evaluation/custom_evaluation.py: a custom evaluation function.

The function sets a different corridor length on each evaluation runner, samples three
rounds on the remote evaluation runners with ``foreach_env_runner(func=...)`` (calling
the runners' sync ``sample()`` and ``get_metrics()``), merges their metrics into the
Algorithm's logger and returns RLlib's ``(results, env_steps, agent_steps)`` tuple.

Changes from the original, besides its imports: its prose and comments are ours, and
``ResultDict`` (RLlib's type alias for a result, from ``ray.rllib.utils.typing``) is
defined here as ``dict``; every call to RLlib's API is as the original makes it.
"""

from typing import Tuple

from rllib_example_envs import SimpleCorridor

from hookbus.metrics import (
    ENV_RUNNER_RESULTS,
    EPISODE_RETURN_MEAN,
    EVALUATION_RESULTS,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
    TRAINING_ITERATION,
)
from hookbus.runners import (
    Algorithm,
    AlgorithmConfig,
    EnvRunnerGroup,
    add_rllib_example_script_args,
    get_trainable_cls,
    run_rllib_example_script_experiment,
)

ResultDict = dict

parser = add_rllib_example_script_args(
    default_iters=50, default_reward=0.7, default_timesteps=50000
)
parser.add_argument("--no-custom-eval", action="store_true")
parser.add_argument("--corridor-length-training", type=int, default=10)
parser.add_argument("--corridor-length-eval-worker-1", type=int, default=20)
parser.add_argument("--corridor-length-eval-worker-2", type=int, default=30)


def custom_eval_function(
    algorithm: Algorithm,
    eval_workers: EnvRunnerGroup,
) -> Tuple[ResultDict, int, int]:
    """Evaluate on longer corridors, three sampling rounds per call."""
    eval_workers.foreach_env_runner(
        func=lambda worker: (
            env.unwrapped.set_corridor_length(
                args.corridor_length_eval_worker_1
                if worker.worker_index == 1
                else args.corridor_length_eval_worker_2
            )
            for env in worker.env.unwrapped.envs
        )
    )

    env_runner_metrics = []
    sampled_episodes = []
    for i in range(3):
        print(f"Training iteration {algorithm.iteration} -> evaluation round {i}")
        episodes_and_metrics_all_env_runners = eval_workers.foreach_env_runner(
            func=lambda worker: (worker.sample(), worker.get_metrics()),
            local_env_runner=False,
        )
        sampled_episodes.extend(
            eps
            for eps_and_mtrcs in episodes_and_metrics_all_env_runners
            for eps in eps_and_mtrcs[0]
        )
        env_runner_metrics.extend(
            eps_and_mtrcs[1] for eps_and_mtrcs in episodes_and_metrics_all_env_runners
        )

    algorithm.metrics.merge_and_log_n_dicts(
        env_runner_metrics, key=(EVALUATION_RESULTS, ENV_RUNNER_RESULTS)
    )
    eval_results = algorithm.metrics.reduce(key=(EVALUATION_RESULTS, ENV_RUNNER_RESULTS))

    env_steps = sum(eps.env_steps() for eps in sampled_episodes)
    agent_steps = sum(eps.agent_steps() for eps in sampled_episodes)

    return eval_results, env_steps, agent_steps


if __name__ == "__main__":
    args = parser.parse_args()
    args.local_mode = True
    base_config = (
        get_trainable_cls(args.algo)
        .get_default_config()
        .environment(
            SimpleCorridor,
            env_config={"corridor_length": args.corridor_length_training},
        )
        .evaluation(
            custom_evaluation_function=(None if args.no_custom_eval else custom_eval_function),
            evaluation_num_env_runners=2,
            evaluation_interval=1,
            evaluation_duration="auto" if args.evaluation_parallel_to_training else 10,
            evaluation_parallel_to_training=args.evaluation_parallel_to_training,
            evaluation_config=AlgorithmConfig.overrides(
                env_config={"corridor_length": args.corridor_length_training * 2},
                metrics_num_episodes_for_smoothing=5,
            ),
        )
    )

    stop = {
        TRAINING_ITERATION: args.stop_iters,
        f"{EVALUATION_RESULTS}/{ENV_RUNNER_RESULTS}/{EPISODE_RETURN_MEAN}": (args.stop_reward),
        NUM_ENV_STEPS_SAMPLED_LIFETIME: args.stop_timesteps,
    }

    run_rllib_example_script_experiment(
        base_config,
        args,
        stop=stop,
        success_metric={
            f"{EVALUATION_RESULTS}/{ENV_RUNNER_RESULTS}/{EPISODE_RETURN_MEAN}": (args.stop_reward),
        },
    )
