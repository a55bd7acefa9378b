"""Port of RLlib's rllib/examples/envs/agents_act_simultaneously.py: simultaneous moves.

Two PPO policies play rock-paper-scissors (with ``--sheldon-cooper-mode`` also lizard and
Spock), both moving at every step; their Discrete observations are one-hot encoded by the
``FlattenObservations(multi_agent=True)`` connector.

Changes from the original, besides its imports: its prose and comments are ours; every
call to RLlib's API is as the original makes it.
"""

from rllib_example_envs import RockPaperScissors

from hookbus.runners import (
    FlattenObservations,
    add_rllib_example_script_args,
    get_trainable_cls,
    register_env,  # noqa: F401  (the original imports it for its commented-out variants)
    run_rllib_example_script_experiment,
)

parser = add_rllib_example_script_args(
    default_reward=0.9, default_iters=50, default_timesteps=100000
)
parser.set_defaults(
    num_agents=2,
)
parser.add_argument(
    "--sheldon-cooper-mode",
    action="store_true",
    help="add lizard and Spock to the moves",
)


if __name__ == "__main__":
    args = parser.parse_args()

    assert args.num_agents == 2, "Must set --num-agents=2 when running this script!"

    base_config = (
        get_trainable_cls(args.algo)
        .get_default_config()
        .environment(
            RockPaperScissors,
            env_config={"sheldon_cooper_mode": args.sheldon_cooper_mode},
        )
        .env_runners(
            env_to_module_connector=(
                lambda env, spaces, device: FlattenObservations(multi_agent=True)
            ),
        )
        .multi_agent(
            policies={"player1", "player2"},
            policy_mapping_fn=lambda agent_id, episode, **kw: agent_id,
        )
    )

    run_rllib_example_script_experiment(base_config, args)
