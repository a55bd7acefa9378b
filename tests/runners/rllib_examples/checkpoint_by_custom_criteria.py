"""Port of RLlib's rllib/examples/checkpoints/checkpoint_by_custom_criteria.py.

Three Tune trials of CartPole, one per learning rate (0.01, 0.001, 0.0001), each saving a
checkpoint every iteration (``args.checkpoint_freq`` is forced to 1). Then the results
are searched: the best trial is the one with the fewest episodes in any one iteration
(on CartPole, fewer episodes per batch means longer, better episodes), checked against
``get_dataframe()``'s own minimum; and from the trials, the checkpoints with the lowest
policy loss and with the highest value-function loss are picked and printed.

Changes from the original, besides its imports: its prose and comments are ours; every
call to RLlib's API is as the original makes it.
"""

from ray import tune

from hookbus.metrics import (
    ENV_RUNNER_RESULTS,
    EPISODE_RETURN_MEAN,
    LEARNER_RESULTS,
)
from hookbus.runners import (
    DEFAULT_MODULE_ID,
    add_rllib_example_script_args,
    get_trainable_cls,
    run_rllib_example_script_experiment,
)

parser = add_rllib_example_script_args(
    default_reward=450.0, default_timesteps=100000, default_iters=200
)


if __name__ == "__main__":
    args = parser.parse_args()

    # A checkpoint at every iteration, whatever the command line says.
    args.checkpoint_freq = 1

    base_config = (
        get_trainable_cls(args.algo)
        .get_default_config()
        .environment("CartPole-v1")
        # One trial per learning rate.
        .training(lr=tune.grid_search([0.01, 0.001, 0.0001]), train_batch_size=2341)
    )
    # Tune trains the three trials and keeps their checkpoints.
    results = run_rllib_example_script_experiment(base_config, args)

    # The best trial: the fewest episodes in a single iteration, over each trial's
    # whole history (scope="all"); "last", "last-5-avg", "last-10-avg" or "avg" would
    # compare only the last or averaged iterations instead.
    metric = "env_runners/num_episodes"
    best_result = results.get_best_result(metric=metric, mode="min", scope="all")
    value_best_metric = best_result.metrics_dataframe[metric].min()
    best_return_best = best_result.metrics_dataframe[
        f"{ENV_RUNNER_RESULTS}/{EPISODE_RETURN_MEAN}"
    ].max()
    print(
        f"Best trial was the one with lr={best_result.metrics['config']['lr']}. "
        f"Reached lowest episode count ({value_best_metric}) in a single iteration and "
        f"an average return of {best_return_best}."
    )

    # The same minimum as the results' dataframe gives.
    assert (
        value_best_metric
        == results.get_dataframe(filter_metric=metric, filter_mode="min")[metric].min()
    )

    # The checkpoint of the trial with the lowest policy loss.
    if args.enable_new_api_stack:
        policy_loss_key = f"{LEARNER_RESULTS}/{DEFAULT_MODULE_ID}/policy_loss"
    else:
        policy_loss_key = "info/learner/default_policy/learner_stats/policy_loss"
    best_result = results.get_best_result(metric=policy_loss_key, mode="min")
    ckpt = best_result.checkpoint
    lowest_policy_loss = best_result.metrics_dataframe[policy_loss_key].min()
    print(f"Checkpoint w/ lowest policy loss ({lowest_policy_loss}): {ckpt}")

    # The checkpoint of the trial with the highest value-function loss.
    if args.enable_new_api_stack:
        vf_loss_key = f"{LEARNER_RESULTS}/{DEFAULT_MODULE_ID}/vf_loss"
    else:
        vf_loss_key = "info/learner/default_policy/learner_stats/vf_loss"
    best_result = results.get_best_result(metric=vf_loss_key, mode="max")
    ckpt = best_result.checkpoint
    highest_value_fn_loss = best_result.metrics_dataframe[vf_loss_key].max()
    print(f"Checkpoint w/ highest value function loss: {ckpt}")
    print(f"Highest value function loss: {highest_value_fn_loss}")
