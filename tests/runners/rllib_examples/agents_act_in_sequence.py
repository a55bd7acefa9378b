"""Port of RLlib's rllib/examples/envs/agents_act_in_sequence.py: turn-based multi-agent.

Two PPO policies play TicTacToe, one per player; only the player to move is observed at
each step, so the agents act in turns.

Changes from the original, besides its imports: its prose and comments are ours; every
call to RLlib's API is as the original makes it.
"""

from rllib_example_envs import TicTacToe

from hookbus.runners import (
    add_rllib_example_script_args,
    get_trainable_cls,
    register_env,  # noqa: F401  (the original imports it for its commented-out variants)
    run_rllib_example_script_experiment,
)

parser = add_rllib_example_script_args(
    default_reward=-4.0, default_iters=50, default_timesteps=100000
)
parser.set_defaults(
    enable_new_api_stack=True,
    num_agents=2,
)


if __name__ == "__main__":
    args = parser.parse_args()

    assert args.num_agents == 2, "Must set --num-agents=2 when running this script!"

    base_config = (
        get_trainable_cls(args.algo)
        .get_default_config()
        .environment(TicTacToe)
        .multi_agent(
            policies={"player1", "player2"},
            policy_mapping_fn=lambda agent_id, episode, **kw: agent_id,
        )
    )

    run_rllib_example_script_experiment(base_config, args)
