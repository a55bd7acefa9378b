# RLlib's rllib/examples/evaluation/custom_evaluation.py (Ray, Apache-2.0), run on hookbus.
#
# Changed: the import lines only (hookbus names, and rllib_shim.py for RLlib's metric-key
# constants, example-script helpers and the SimpleCorridor env), and RLlib's docstring and
# comments, left out. Nothing else: the custom evaluation function calls
# foreach_env_runner(func=...) with a lambda calling worker.sample() and
# worker.get_metrics(), RLlib's deprecated merge_and_log_n_dicts, reduce(key=...),
# env_steps()/agent_steps(), and returns RLlib's (results, env_steps, agent_steps) tuple.
# The test (test_rllib_examples.py) scales the stop criteria down (--stop-iters=2).
# As in RLlib, the first foreach_env_runner call returns generators that nobody iterates,
# so the eval corridors keep the training length.
from typing import Tuple

from rllib_shim import (
    ENV_RUNNER_RESULTS,
    EPISODE_RETURN_MEAN,
    EVALUATION_RESULTS,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
    TRAINING_ITERATION,
    ResultDict,
    SimpleCorridor,
    add_rllib_example_script_args,
    get_trainable_cls,
    run_rllib_example_script_experiment,
)

from hookbus.runners import Algorithm, AlgorithmConfig, EnvRunnerGroup

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
