"""Port of RLlib's rllib/examples/fault_tolerance/crashing_and_stalling_env.py.

Learning CartPole while its envs crash (raise in ``reset()`` / ``step()``) and stall
(sleep) at random on chosen runners, with ``fault_tolerance(restart_failed_env_runners=
True)`` and, with ``--restart-failed-envs``, ``restart_failed_sub_environments=True``.

Changes from the original, besides its imports: its prose and comments are ours; the
original's ``from ray import tune`` reaches ``tune.register_env`` and
``tune.registry.get_trainable_cls``, which here are hookbus's ``register_env`` and
``get_trainable_cls`` (Tune's registry does not know hookbus's algorithms); every other
call to RLlib's API is as the original makes it.
"""

from gymnasium.wrappers import TimeLimit
from rllib_example_envs import CartPoleCrashing, MultiAgentCartPoleCrashing

from hookbus.runners import add_rllib_example_script_args, get_trainable_cls, register_env

parser = add_rllib_example_script_args(
    default_reward=450.0,
    default_timesteps=2000000,
)
parser.set_defaults(
    enable_new_api_stack=True,
    num_env_runners=4,
    num_envs_per_env_runner=2,
)
parser.add_argument(
    "--stall",
    action="store_true",
    help="also stall the envs now and then",
)
parser.add_argument(
    "--restart-failed-envs",
    action="store_true",
    help="restart a failed sub-env in place, not its whole EnvRunner",
)
args = parser.parse_args()

if args.num_agents > 0:
    register_env("env", lambda cfg: MultiAgentCartPoleCrashing(cfg))
else:
    register_env(
        "env",
        lambda cfg: TimeLimit(CartPoleCrashing(cfg), max_episode_steps=500),
    )

config = (
    get_trainable_cls(args.algo)
    .get_default_config()
    .api_stack(
        enable_rl_module_and_learner=True,
        enable_env_runner_and_connector_v2=True,
    )
    .environment(
        "env",
        env_config={
            "num_agents": args.num_agents,
            "p_crash": 0.0001,  # per step()
            "p_crash_reset": 0.001,  # per reset()
            "crash_on_worker_indices": [1, 2],
            "init_time_s": 2.0,
            "p_stall": 0.0005,  # per step()
            "p_stall_reset": 0.001,  # per reset()
            "stall_time_sec": (2, 5) if args.stall else 0.0,
            "stall_on_worker_indices": [2, 3],
        },
    )
    .fault_tolerance(
        restart_failed_env_runners=True,
        restart_failed_sub_environments=args.restart_failed_envs,
    )
)

if args.num_agents > 0:
    config.multi_agent(
        policies={f"p{i}" for i in range(args.num_agents)},
        policy_mapping_fn=lambda aid, *a, **kw: f"p{aid}",
    )


if __name__ == "__main__":
    from hookbus.runners import run_rllib_example_script_experiment

    run_rllib_example_script_experiment(config, args=args)
