"""Port of RLlib's rllib/examples/checkpoints/change_config_during_training.py.

Go on from an earlier experiment with some settings changed. A first Tune run (the "1st
config", CartPole, or multi-agent CartPole with ``--num-agents`` > 0 where agent 1 learns
twice as fast as agent 0) checkpoints every iteration and stops at
``--stop-reward-first-config``. A fresh Algorithm restored from the best checkpoint must
still reach that return in evaluation and in one more training iteration. Then the
config changes a lot (learning rate, batch size, gradient clipping, gamma, epochs, two
learners, three runners of five envs) and gets an ``on_algorithm_init`` callback that
restores the checkpoint into the new Algorithm and checks that p0's weights changed; a
second run from iteration 0 trains on to ``--stop-reward`` and must report the new
learning rate.

Changes from the original, besides its imports: its prose and comments are ours; every
call to RLlib's API is as the original makes it.
"""

from hookbus.metrics import (
    ENV_RUNNER_RESULTS,
    EPISODE_RETURN_MEAN,
    LEARNER_RESULTS,
)
from hookbus.runners import (
    DEFAULT_MODULE_ID,
    AlgorithmConfig,
    MultiAgentCartPole,
    PolicySpec,
    PPOConfig,
    add_rllib_example_script_args,
    check,
    convert_to_numpy,
    register_env,
    run_rllib_example_script_experiment,
)

parser = add_rllib_example_script_args(
    default_reward=450.0, default_timesteps=10000000, default_iters=2000
)
parser.add_argument(
    "--stop-reward-first-config",
    type=float,
    default=150.0,
    help="the mean return at which the run on the 1st config stops",
)
# A checkpoint at every iteration and one at the end, unless the command line says no.
parser.set_defaults(
    enable_new_api_stack=True,
    checkpoint_freq=1,
    checkpoint_at_end=True,
)


if __name__ == "__main__":
    args = parser.parse_args()

    register_env("ma_cart", lambda cfg: MultiAgentCartPole({"num_agents": args.num_agents}))

    # The 1st config.
    base_config = (
        PPOConfig()
        .environment("CartPole-v1" if args.num_agents == 0 else "ma_cart")
        .training(lr=0.0001)
        # (The original leaves msgpack checkpoints off here: Tune's JSON logger chokes
        # on binary data in the result's `perf` key.)
        # .experimental(_use_msgpack_checkpoints=True)
    )

    # Multi-agent: p<i> for agent i, agent 1 learning twice as fast as agent 0.
    if args.num_agents > 0:
        base_config.multi_agent(
            policies={
                f"p{aid}": PolicySpec(
                    config=AlgorithmConfig.overrides(
                        lr=5e-5 * (aid + 1),
                    )
                )
                for aid in range(args.num_agents)
            },
            policy_mapping_fn=lambda aid, *a, **kw: f"p{aid}",
        )

    # The 1st run stops at this mean return.
    metric = f"{ENV_RUNNER_RESULTS}/{EPISODE_RETURN_MEAN}"
    stop = {metric: args.stop_reward_first_config}

    tuner_results = run_rllib_example_script_experiment(
        base_config,
        args,
        stop=stop,
        keep_ray_up=True,
    )

    # A restored Algorithm must perform as well as the one saved.
    # - The best checkpoint reached the 1st run's return.
    best_result = tuner_results.get_best_result(metric=metric, mode="max")
    assert (
        best_result.metrics[ENV_RUNNER_RESULTS][EPISODE_RETURN_MEAN]
        >= args.stop_reward_first_config
    )
    best_checkpoint_path = best_result.checkpoint.path

    # - A fresh Algorithm, loaded from the checkpoint's folder.
    test_algo = base_config.build()
    test_algo.restore_from_path(best_checkpoint_path)
    assert test_algo.training_iteration > 0
    # - Evaluation reaches that return ...
    test_eval_results = test_algo.evaluate()
    assert (
        test_eval_results[ENV_RUNNER_RESULTS][EPISODE_RETURN_MEAN] >= args.stop_reward_first_config
    ), test_eval_results[ENV_RUNNER_RESULTS][EPISODE_RETURN_MEAN]
    # - ... and so does one more training iteration (a lost optimizer state would
    # show here).
    test_results = test_algo.train()
    assert test_results[ENV_RUNNER_RESULTS][EPISODE_RETURN_MEAN] >= args.stop_reward_first_config, (
        test_results[ENV_RUNNER_RESULTS][EPISODE_RETURN_MEAN]
    )
    test_algo.stop()

    # Restore the checkpoint as soon as the new Algorithm exists: every part of it,
    # the learners' optimizer states included.
    def on_algorithm_init(algorithm, **kwargs):
        module_p0 = algorithm.get_module("p0")
        weight_before = convert_to_numpy(next(iter(module_p0.parameters())))

        algorithm.restore_from_path(best_checkpoint_path)

        # The weights must have changed.
        weight_after = convert_to_numpy(next(iter(module_p0.parameters())))
        check(weight_before, weight_after, false=True)

    # The 2nd config.
    (
        base_config
        # Restore when the Algorithm is built.
        .callbacks(on_algorithm_init=on_algorithm_init)
        # Training settings, changed a lot.
        .training(
            lr=0.0003,
            train_batch_size=5000,
            grad_clip=100.0,
            gamma=0.996,
            num_epochs=6,
            vf_loss_coeff=0.01,
        )
        # Two learners.
        .learners(num_learners=2)
        # More runners, and more envs on each.
        .env_runners(num_env_runners=3, num_envs_per_env_runner=5)
    )

    # The 2nd run stops at the final return.
    stop = {metric: args.stop_reward}

    # A new experiment, from iteration 0 (Tuner.restore would go on from the crash's
    # iteration instead), restored from the checkpoint by on_algorithm_init.
    tuner_results = run_rllib_example_script_experiment(base_config, args, stop=stop)

    # The 2nd run trained with the new learning rate.
    assert (
        tuner_results[0].metrics[LEARNER_RESULTS][DEFAULT_MODULE_ID][
            "default_optimizer_learning_rate"
        ]
        == base_config.lr
        == 0.0003
    )
