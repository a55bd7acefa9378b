"""Port of RLlib's rllib/examples/curriculum/curriculum_learning.py: an env-task curriculum.

FrozenLake 8x8 with at most 16 steps: three maps whose goal moves further from the start.
An ``on_train_result`` callback moves every EnvRunner to the next map once the mean return
passes ``--upgrade-task-threshold`` (recreating their envs through ``foreach_worker`` and
``env_runner.make_env()``), back to the first map if the policy collapses, and reports
``task_solved`` when the hardest map is solved.

Changes from the original, besides its imports: its prose and comments are ours; every
call to RLlib's API is as the original makes it.
"""

from functools import partial

from hookbus.kernel import Callback as DefaultCallbacks
from hookbus.metrics import (
    ENV_RUNNER_RESULTS,
    EPISODE_RETURN_MEAN,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
    TRAINING_ITERATION,
)
from hookbus.runners import (
    Algorithm,
    DefaultModelConfig,
    FlattenObservations,
    add_rllib_example_script_args,
    get_trainable_cls,
    run_rllib_example_script_experiment,
)

parser = add_rllib_example_script_args(default_iters=100, default_timesteps=600000)
parser.set_defaults(enable_new_api_stack=True)
parser.add_argument(
    "--upgrade-task-threshold",
    type=float,
    default=0.99,
    help="the mean return at which the runners move on to the next map",
)
parser.add_argument(
    "--no-curriculum",
    action="store_true",
    help="train on the hardest map from the start",
)

ENV_OPTIONS = {
    "is_slippery": False,
    # 16 steps at most: the far goal is out of reach of random walks.
    "max_episode_steps": 16,
}

# The maps, easiest (0) to hardest (2): the goal G moves away from the start S.
ENV_MAPS = [
    [
        "SFFHFFFH",
        "FFFHFFFF",
        "FFGFFFFF",
        "FFFFFFFF",
        "HFFFFFFF",
        "HHFFFFHF",
        "FFFFFHHF",
        "FHFFFFFF",
    ],
    [
        "SFFHFFFH",
        "FFFHFFFF",
        "FFFFFFFF",
        "FFFFFFFF",
        "HFFFFFFF",
        "HHFFGFHF",
        "FFFFFHHF",
        "FHFFFFFF",
    ],
    [
        "SFFHFFFH",
        "FFFHFFFF",
        "FFFFFFFF",
        "FFFFFFFF",
        "HFFFFFFF",
        "HHFFFFHF",
        "FFFFFHHF",
        "FHFFFFFG",
    ],
]


def _remote_fn(env_runner, new_task: int):
    # Point the runner's env_config at the new map, then build its env again.
    env_runner.config.environment(env_config={"desc": ENV_MAPS[new_task]})
    env_runner.make_env()


class EnvTaskCallback(DefaultCallbacks):
    """Move every runner to a harder map once the current one is mastered."""

    def on_train_result(
        self,
        *,
        algorithm: Algorithm,
        metrics_logger=None,
        result: dict,
        **kwargs,
    ) -> None:
        if args.no_curriculum:
            algorithm._counters["current_env_task"] = 2
        current_task = algorithm._counters["current_env_task"]

        result["task_solved"] = 0.0
        current_return = result[ENV_RUNNER_RESULTS][EPISODE_RETURN_MEAN]
        if current_return > args.upgrade_task_threshold:
            if current_task < 2:
                new_task = current_task + 1
                print(
                    f"Switching task/map on all EnvRunners to #{new_task} (0=easiest, "
                    f"2=hardest), b/c R={current_return} on current task."
                )
                algorithm.env_runner_group.foreach_worker(
                    func=partial(_remote_fn, new_task=new_task)
                )
                algorithm._counters["current_env_task"] = new_task
            elif current_return == 1.0:
                result["task_solved"] = 1.0
        elif current_return == 0.0 and current_task > 0:
            print("Emergency brake: the policy collapsed; back to task 0.")
            algorithm.env_runner_group.foreach_worker(func=partial(_remote_fn, new_task=0))
            algorithm._counters["current_env_task"] = 0


if __name__ == "__main__":
    args = parser.parse_args()

    base_config = (
        get_trainable_cls(args.algo)
        .get_default_config()
        .callbacks(EnvTaskCallback)
        .environment(
            "FrozenLake-v1",
            env_config={
                "desc": ENV_MAPS[2 if args.no_curriculum else 0],
                **ENV_OPTIONS,
            },
        )
        .env_runners(
            num_envs_per_env_runner=5,
            env_to_module_connector=lambda env: FlattenObservations(),
        )
        .training(
            num_epochs=6,
            vf_loss_coeff=0.01,
            lr=0.0002,
        )
        .rl_module(model_config=DefaultModelConfig(vf_share_layers=True))
    )

    stop = {
        TRAINING_ITERATION: args.stop_iters,
        # Stop once the hardest map is solved, not at a return: the easy map's 1.0
        # must not end the run.
        "task_solved": 1.0,
        NUM_ENV_STEPS_SAMPLED_LIFETIME: args.stop_timesteps,
    }

    run_rllib_example_script_experiment(
        base_config, args, stop=stop, success_metric={"task_solved": 1.0}
    )
