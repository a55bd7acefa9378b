"""Port of RLlib's rllib/examples/checkpoints/continue_training_from_checkpoint.py.

What to do when runs die midway: Tune checkpoints the Algorithm at every iteration; a
callback crashes the run on purpose one iteration after the mean return reaches
``--stop-reward-crash`` (one late, so that Tune has saved the checkpoint of the iteration
that reached it). The script then builds a fresh Algorithm from the same config minus the
crashing callback, restores it from the best checkpoint, checks that evaluation and one
more training iteration still reach the crash return, and finally restores the Tuner from
its experiment folder (``resume_errored=True``) to train on to ``--stop-reward``. With
``--num-agents`` > 0 it runs multi-agent CartPole, policy ``p<i>`` per agent, the second
with twice the first's learning rate.

Changes from the original, besides its imports: its prose and comments are ours; every
call to RLlib's API is as the original makes it.
"""

import re
import time

from ray import tune
from ray.air.integrations.wandb import WandbLoggerCallback

from hookbus.kernel import Callback as RLlibCallback
from hookbus.metrics import (
    ENV_RUNNER_RESULTS,
    EPISODE_RETURN_MEAN,
)
from hookbus.runners import (
    AlgorithmConfig,
    MultiAgentCartPole,
    PolicySpec,
    add_rllib_example_script_args,
    check_learning_achieved,
    get_trainable_cls,
    register_env,
)

parser = add_rllib_example_script_args(
    default_reward=500.0, default_timesteps=10000000, default_iters=2000
)
parser.add_argument(
    "--stop-reward-crash",
    type=float,
    default=200.0,
    help="the mean return after which the run crashes on purpose",
)
# A checkpoint at every iteration and one at the end, unless the command line says no.
parser.set_defaults(checkpoint_freq=1, checkpoint_at_end=True)


class CrashAfterNIters(RLlibCallback):
    """Raise one iteration after the mean return first reaches ``--stop-reward-crash``."""

    def __init__(self):
        super().__init__()
        # Crash one iteration late: Tune saves the reaching iteration's checkpoint first.
        self._should_crash = False

    def on_train_result(self, *, algorithm, metrics_logger, result, **kwargs):
        # The checkpoint written after the previous iteration has the trigger return.
        if self._should_crash:
            raise RuntimeError("Intended crash after reaching trigger return.")
        # Trigger reached: crash at the next iteration.
        elif result[ENV_RUNNER_RESULTS][EPISODE_RETURN_MEAN] >= args.stop_reward_crash:
            print(f"Reached trigger return of {result[ENV_RUNNER_RESULTS][EPISODE_RETURN_MEAN]}")
            self._should_crash = True


if __name__ == "__main__":
    args = parser.parse_args()

    register_env("ma_cart", lambda cfg: MultiAgentCartPole({"num_agents": args.num_agents}))

    config = (
        get_trainable_cls(args.algo)
        .get_default_config()
        .api_stack(
            enable_rl_module_and_learner=args.enable_new_api_stack,
            enable_env_runner_and_connector_v2=args.enable_new_api_stack,
        )
        .environment("CartPole-v1" if args.num_agents == 0 else "ma_cart")
        .env_runners(create_env_on_local_worker=True)
        .training(lr=0.0001)
        .callbacks(CrashAfterNIters)
    )

    # Tune's callbacks: WandB logging when a key is given.
    tune_callbacks = []
    if args.wandb_key:
        project = args.wandb_project or (
            args.algo.lower() + "-" + re.sub("\\W+", "-", str(config.env).lower())
        )
        tune_callbacks.append(
            WandbLoggerCallback(
                api_key=args.wandb_key,
                project=args.wandb_project,
                upload_checkpoints=False,
                **({"name": args.wandb_run_name} if args.wandb_run_name else {}),
            )
        )

    # Multi-agent: p<i> for agent i, agent 1 learning twice as fast as agent 0.
    if args.num_agents > 0:
        config.multi_agent(
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

    # Stop at the final mean return; the intended crash is not a stop criterion.
    stop = {
        f"{ENV_RUNNER_RESULTS}/{EPISODE_RETURN_MEAN}": args.stop_reward,
    }

    # Train under Tune, checkpointing as asked, until the crash.
    tuner = tune.Tuner(
        trainable=config.algo_class,
        param_space=config,
        run_config=tune.RunConfig(
            callbacks=tune_callbacks,
            checkpoint_config=tune.CheckpointConfig(
                checkpoint_frequency=args.checkpoint_freq,
                checkpoint_at_end=args.checkpoint_at_end,
            ),
            stop=stop,
        ),
    )
    tuner_results = tuner.fit()

    # A restored Algorithm must perform as well as the one that crashed.
    # - The best checkpoint has the trigger return.
    metric = f"{ENV_RUNNER_RESULTS}/{EPISODE_RETURN_MEAN}"
    best_result = tuner_results.get_best_result(metric=metric, mode="max")
    assert best_result.metrics[ENV_RUNNER_RESULTS][EPISODE_RETURN_MEAN] >= args.stop_reward_crash
    # - Same config without the crashing callback.
    config.callbacks(None)
    # - A fresh Algorithm, loaded from Tune's checkpoint object.
    test_algo = config.build()
    test_algo.restore(best_result.checkpoint)
    assert test_algo.training_iteration > 0
    # - Evaluation reaches the trigger return ...
    test_eval_results = test_algo.evaluate()
    assert test_eval_results[ENV_RUNNER_RESULTS][EPISODE_RETURN_MEAN] >= args.stop_reward_crash, (
        test_eval_results[ENV_RUNNER_RESULTS][EPISODE_RETURN_MEAN]
    )
    # - ... and so does one more training iteration (a lost optimizer state would
    # show here).
    test_results = test_algo.train()
    assert test_results[ENV_RUNNER_RESULTS][EPISODE_RETURN_MEAN] >= args.stop_reward_crash, (
        test_results[ENV_RUNNER_RESULTS][EPISODE_RETURN_MEAN]
    )
    test_algo.stop()

    # Restore the Tuner from its experiment folder (WandB logging, if any, goes on in
    # the same run) and train on from where the crash left off.
    restored_tuner = tune.Tuner.restore(
        path=tuner_results.experiment_path,
        trainable=config.algo_class,
        param_space=config,
        # The trial errored (the intended crash): resume it anyway.
        resume_errored=True,
    )
    tuner_results = restored_tuner.fit()

    # A pause so that WandB's logger uploads the last iterations.
    time.sleep(20)

    if args.as_test:
        check_learning_achieved(tuner_results, args.stop_reward, metric=metric)
