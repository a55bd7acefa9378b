"""Port of RLlib's rllib/examples/connectors/flatten_observations_dict_space.py.

CartPole with its four numbers taken apart into a nested observation (a Dict holding a
Dict and a Tuple, plus a Discrete(3) of pure noise); the ``FlattenObservations``
connector in the env-to-module pipeline turns each one into a flat vector for the
module. With ``--num-agents`` > 0 the same env runs per agent, one policy each, and the
connector flattens every agent's observations (``multi_agent=True``). Success is
CartPole's return (``--stop-reward``, 400 by default).

Changes from the original, besides its imports: its prose and comments are ours; every
call to RLlib's API is as the original makes it.
"""

from rllib_example_envs import (
    CartPoleWithDictObservationSpace,
    MultiAgentCartPoleWithDictObservationSpace,
)

from hookbus.runners import (
    DefaultModelConfig,
    FlattenObservations,
    add_rllib_example_script_args,
    get_trainable_cls,
    register_env,
    run_rllib_example_script_experiment,
)

parser = add_rllib_example_script_args(default_timesteps=200000, default_reward=400.0)


if __name__ == "__main__":
    args = parser.parse_args()

    # The env-to-module pipeline: one FlattenObservations piece.
    def _env_to_module_pipeline(env, spaces, device):
        return FlattenObservations(multi_agent=args.num_agents > 0)

    # The env under a name, single- or multi-agent.
    if args.num_agents > 0:
        register_env(
            "env",
            lambda _: MultiAgentCartPoleWithDictObservationSpace(
                config={"num_agents": args.num_agents}
            ),
        )
    else:
        register_env("env", lambda _: CartPoleWithDictObservationSpace())

    base_config = (
        get_trainable_cls(args.algo)
        .get_default_config()
        .environment("env")
        .env_runners(env_to_module_connector=_env_to_module_pipeline)
        .training(
            gamma=0.99,
            lr=0.0003,
        )
        .rl_module(
            model_config=DefaultModelConfig(
                fcnet_hiddens=[32],
                fcnet_activation="linear",
                vf_share_layers=True,
            ),
        )
    )

    # Multi-agent: policy p<i> for agent i.
    if args.num_agents > 0:
        base_config.multi_agent(
            policies={f"p{i}" for i in range(args.num_agents)},
            policy_mapping_fn=lambda aid, *a, **kw: f"p{aid}",
        )

    # Per-algorithm settings that make it learn better.
    if args.algo == "PPO":
        base_config.training(
            num_epochs=6,
            vf_loss_coeff=0.01,
        )
    elif args.algo == "IMPALA":
        base_config.training(
            lr=0.0005,
            vf_loss_coeff=0.05,
            entropy_coeff=0.0,
        )

    run_rllib_example_script_experiment(base_config, args)
