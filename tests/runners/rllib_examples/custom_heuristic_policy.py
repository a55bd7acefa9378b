"""Port of RLlib's rllib/examples/multi_agent/custom_heuristic_policy.py.

Two CartPole agents: agent 0 is mapped to a policy that PPO trains, agent 1 to a module
that acts at random (``RandomRLModule``, given through an ``RLModuleSpec``). Only the
learnable policy is in ``policies_to_train``, since the random module cannot be trained.
The script's return is the sum over both agents, so reaching a threshold needs the
learnable agent to keep its pole up while the random one drops its own within ~22 steps.

Changes from the original, besides its imports: its prose and comments are ours; every
call to RLlib's API is as the original makes it.
"""

from hookbus.runners import (
    MultiAgentCartPole,
    MultiRLModuleSpec,
    PPOConfig,
    RandomRLModule,
    RLModuleSpec,
    add_rllib_example_script_args,
    register_env,
    run_rllib_example_script_experiment,
)

parser = add_rllib_example_script_args(
    default_iters=40, default_reward=500.0, default_timesteps=200000
)
parser.set_defaults(
    num_agents=2,
)


if __name__ == "__main__":
    args = parser.parse_args()

    assert args.num_agents == 2, "Must set --num-agents=2 when running this script!"

    # n CartPoles side by side, one per agent, each on its own.
    register_env(
        "multi_agent_cartpole",
        lambda _: MultiAgentCartPole({"num_agents": args.num_agents}),
    )

    base_config = (
        PPOConfig()
        .environment("multi_agent_cartpole")
        .multi_agent(
            policies={"learnable_policy", "random"},
            # Even agent ids learn, odd ones act at random.
            policy_mapping_fn=lambda agent_id, *args, **kwargs: [
                "learnable_policy",
                "random",
            ][agent_id % 2],
            # The random module has nothing to train: only the learnable one is listed.
            policies_to_train=["learnable_policy"],
        )
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    "learnable_policy": RLModuleSpec(),
                    "random": RLModuleSpec(module_class=RandomRLModule),
                }
            ),
        )
    )

    run_rllib_example_script_experiment(base_config, args)
