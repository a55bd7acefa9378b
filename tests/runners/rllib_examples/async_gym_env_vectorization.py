"""Port of RLlib's rllib/examples/envs/async_gym_env_vectorization.py: ASYNC sub-envs.

A CartPole slowed by 5 ms per observation, six sub-envs per runner, stepped either in
sequence (``SYNC``) or each in its own process (``ASYNC``, the default here); with
``--vectorize-mode=BOTH`` Ray Tune runs both and the script checks ASYNC is faster.

Changes from the original, besides its imports: its prose and comments are ours; every
call to RLlib's and Ray Tune's API is as the original makes it (``from ray import tune``
stays: hookbus finds envs registered with ``tune.register_env``).
"""

import time

import gymnasium as gym
from ray import tune

from hookbus.runners import (
    PPOConfig,
    add_rllib_example_script_args,
    run_rllib_example_script_experiment,
)

parser = add_rllib_example_script_args(default_reward=60.0)
parser.set_defaults(
    env="CartPole-v1",
    num_envs_per_env_runner=6,
)
parser.add_argument(
    "--vectorize-mode",
    type=str,
    default="ASYNC",
    help='SYNC, ASYNC, or "BOTH" (a Tune grid search over the two)',
)


class SlowEnv(gym.ObservationWrapper):
    def observation(self, observation):
        time.sleep(0.005)
        return observation


if __name__ == "__main__":
    args = parser.parse_args()

    if args.no_tune and args.vectorize_mode == "BOTH":
        raise ValueError("Can't run this script with both --no-tune and --vectorize-mode=BOTH!")

    def _env_creator(cfg):
        return SlowEnv(gym.make(args.env, **cfg))

    tune.register_env("slow-env", _env_creator)

    base_config = (
        PPOConfig()
        .environment("slow-env")
        .env_runners(
            gym_env_vectorize_mode=(
                tune.grid_search(["SYNC", "ASYNC"])
                if args.vectorize_mode == "BOTH"
                else args.vectorize_mode
            ),
        )
    )

    results = run_rllib_example_script_experiment(base_config, args)

    if args.vectorize_mode == "BOTH":
        throughput_sync = (
            results[0].metrics["num_env_steps_sampled_lifetime"]
            / results[0].metrics["time_total_s"]
        )
        throughput_async = (
            results[1].metrics["num_env_steps_sampled_lifetime"]
            / results[1].metrics["time_total_s"]
        )
        assert throughput_async > throughput_sync
