"""Port of RLlib's rllib/examples/evaluation/evaluation_parallel_to_training.py.

Evaluation runs on remote evaluation runners while the training step runs; a callback
checks that every round ran the configured duration: the number of episodes exactly, the
timesteps within 20, or with ``"auto"`` at least one step per evaluation runner.

Changes from the original, besides its imports: its prose and comments are ours, and
``ResultDict`` (RLlib's type alias, from ``ray.rllib.utils.typing``) is defined here as
``dict``; every call to RLlib's API is as the original makes it.
"""

from typing import Optional

from hookbus.kernel import Callback as DefaultCallbacks
from hookbus.metrics import (
    ENV_RUNNER_RESULTS,
    EPISODE_RETURN_MEAN,
    EVALUATION_RESULTS,
    NUM_ENV_STEPS_SAMPLED,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
    NUM_EPISODES,
    TRAINING_ITERATION,
    MetricsLogger,
)
from hookbus.runners import (
    Algorithm,
    MultiAgentCartPole,
    add_rllib_example_script_args,
    get_trainable_cls,
    register_env,
    run_rllib_example_script_experiment,
)

ResultDict = dict

parser = add_rllib_example_script_args(default_reward=500.0)
parser.set_defaults(
    evaluation_num_env_runners=2,
    evaluation_interval=1,
    evaluation_duration_unit="timesteps",
)
parser.add_argument(
    "--evaluation-parallel-to-training-wo-thread",
    action="store_true",
    help="a debugging switch of RLlib's: evaluate in parallel without a thread pool",
)


class AssertEvalCallback(DefaultCallbacks):
    def on_train_result(
        self,
        *,
        algorithm: Algorithm,
        metrics_logger: Optional[MetricsLogger] = None,
        result: ResultDict,
        **kwargs,
    ):
        eval_results = result.get(EVALUATION_RESULTS, {})
        eval_env_runner_results = eval_results.get(ENV_RUNNER_RESULTS)
        if eval_env_runner_results and NUM_EPISODES in eval_env_runner_results:
            num_episodes_done = eval_env_runner_results[NUM_EPISODES]
            if algorithm.config.enable_env_runner_and_connector_v2:
                num_timesteps_reported = eval_env_runner_results[NUM_ENV_STEPS_SAMPLED]
            else:
                num_timesteps_reported = eval_results["timesteps_this_iter"]

            if algorithm.config.evaluation_duration == "auto":
                # At least one sample() per evaluation runner, unless every one was
                # still busy with an older request.
                assert (
                    num_timesteps_reported == 0
                    or num_timesteps_reported >= algorithm.config.evaluation_num_env_runners
                )
            elif algorithm.config.evaluation_duration_unit == "episodes":
                assert num_episodes_done == algorithm.config.evaluation_duration, (
                    num_episodes_done,
                    algorithm.config.evaluation_duration,
                )
                print(f"Number of run evaluation episodes: {num_episodes_done} (ok)!")
            else:
                num_timesteps_wanted = algorithm.config.evaluation_duration
                delta = num_timesteps_wanted - num_timesteps_reported
                assert abs(delta) < 20, (
                    delta,
                    num_timesteps_wanted,
                    num_timesteps_reported,
                )
                print(f"Number of run evaluation timesteps: {num_timesteps_reported} (ok)!")


if __name__ == "__main__":
    args = parser.parse_args()

    if args.num_agents > 0:
        register_env(
            "env",
            lambda _: MultiAgentCartPole(config={"num_agents": args.num_agents}),
        )

    base_config = (
        get_trainable_cls(args.algo)
        .get_default_config()
        .environment("env" if args.num_agents > 0 else "CartPole-v1")
        .callbacks(AssertEvalCallback)
        .evaluation(
            evaluation_parallel_to_training=args.evaluation_parallel_to_training,
            evaluation_num_env_runners=args.evaluation_num_env_runners,
            evaluation_interval=args.evaluation_interval,
            evaluation_duration=args.evaluation_duration,
            evaluation_duration_unit=args.evaluation_duration_unit,
            evaluation_config={
                "explore": False,
                "metrics_num_episodes_for_smoothing": 5,
            },
        )
        .debugging(
            _evaluation_parallel_to_training_wo_thread=(
                args.evaluation_parallel_to_training_wo_thread
            ),
        )
    )

    if args.num_agents > 0:
        base_config.multi_agent(
            policies={f"p{i}" for i in range(args.num_agents)},
            policy_mapping_fn=lambda aid, *a, **kw: f"p{aid}",
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
