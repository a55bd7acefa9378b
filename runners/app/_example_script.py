"""RLlib's example-script harness: run an experiment from a config and the script's options.

Nearly every RLlib example script ends with ``parser = add_rllib_example_script_args(...)``
and ``run_rllib_example_script_experiment(base_config, args, stop=...)`` (from
``ray.rllib.utils.test_utils``). These two take the same options and keywords, so such a
script runs on hookbus once its imports change. Where hookbus differs (numpy learners, no
offline output, Tune optional), the option is accepted and documented, or refused with
one clear error: docs/migrating.md, "Example scripts".
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hookbus.events import ConfigError
from hookbus.metrics import (
    ENV_RUNNER_RESULTS,
    EPISODE_RETURN_MEAN,
    EVALUATION_RESULTS,
    NUM_ENV_STEPS_SAMPLED_LIFETIME,
    TRAINING_ITERATION,
)

from ._example_args import add_rllib_example_script_args

if TYPE_CHECKING:
    from ..config import AlgorithmConfig

__all__ = ("check_learning_achieved", "run_rllib_example_script_experiment")

_RETURN = f"{ENV_RUNNER_RESULTS}/{EPISODE_RETURN_MEAN}"
_EVAL_RETURN = f"{EVALUATION_RESULTS}/{ENV_RUNNER_RESULTS}/{EPISODE_RETURN_MEAN}"


def run_rllib_example_script_experiment(
    base_config: AlgorithmConfig[Any],
    args: argparse.Namespace | None = None,
    *,
    stop: Mapping[str, float] | None = None,
    success_metric: Mapping[str, float] | None = None,
    trainable: type | None = None,
    tune_callbacks: list[Any] | None = None,
    keep_config: bool = False,
    keep_ray_up: bool = False,
    scheduler: Any = None,
    progress_reporter: Any = None,
) -> Any:
    """Run ``base_config`` as RLlib's example scripts do; return the last result or Tune's.

    ``stop`` maps result keys (``"/"`` for nesting) to thresholds; the run stops when one is
    reached (default: ``--stop-reward`` on the mean return, ``--stop-timesteps``,
    ``--stop-iters``). Unless ``keep_config``, the options set the env (when the config
    has none), runner counts and evaluation. With ``--no-tune``, or when Ray Tune is not
    installed and nothing asks for it, iterations run here and the last result is
    returned; otherwise Ray Tune runs the trials and its ``ResultGrid`` is returned. With
    ``--as-test`` the run raises ValueError unless ``success_metric`` (default: the
    evaluation's or the training mean return in ``stop``, else ``--stop-reward``) is met.
    ``keep_ray_up`` (RLlib's, which shuts Ray down at the end without it) has no effect:
    hookbus leaves Ray as it is, so a script that goes on with Ray (RLlib's self-play
    examples) and one that does not both run.
    """
    if args is None:
        args = add_rllib_example_script_args().parse_args()
    as_test = bool(args.as_test or args.as_release_test)
    if stop is None:
        stop = {
            _RETURN: args.stop_reward,
            f"{ENV_RUNNER_RESULTS}/{NUM_ENV_STEPS_SAMPLED_LIFETIME}": args.stop_timesteps,
            TRAINING_ITERATION: args.stop_iters,
        }
    config = base_config if keep_config else _apply_args(base_config, args)
    metric, threshold = _success(success_metric, stop, args)
    if args.no_tune or not _wants_tune(args):
        result = _run_here(config, args, stop)
        reached = _lookup(result, metric)
    else:
        result = _run_tune(
            config, args, stop, trainable, tune_callbacks, scheduler, progress_reporter
        )
        frame = result.get_dataframe()
        reached = max(frame[metric]) if metric in frame else None
    if as_test:
        if reached is None or not reached >= threshold:
            raise ValueError(f"`{metric}` of {threshold} not reached (best: {reached})!")
        print(f"`{metric}` of {threshold} reached! ok")
    return result


def check_learning_achieved(
    tune_results: Any,
    min_value: float,
    evaluation: bool | None = None,
    metric: str = _RETURN,
) -> None:
    """Raise ValueError unless some iteration of some trial reached ``min_value``.

    As RLlib's: ``tune_results`` is a Tune ``ResultGrid``; ``evaluation`` True reads
    ``evaluation/<metric>``, False ``<metric>``, None the evaluation's where a row has it.
    """
    recorded = []
    for _, row in tune_results.get_dataframe().iterrows():
        evaluated = f"{EVALUATION_RESULTS}/{metric}"
        use_evaluation = evaluation or (evaluation is None and evaluated in row)
        recorded.append(row[evaluated] if use_evaluation else row[metric])
    if max(recorded) < min_value:
        raise ValueError(f"`{metric}` of {min_value} not reached!")
    print(f"`{metric}` of {min_value} reached! ok")


def _apply_args(config: AlgorithmConfig[Any], args: argparse.Namespace) -> AlgorithmConfig[Any]:
    if args.output is not None:
        raise ConfigError(
            f"--output {args.output!r}: hookbus writes no offline data; record events with "
            f"config.callbacks(Recorder(path)) instead (docs/recording.md)"
        )
    gpus = (args.num_gpus_per_learner or 0) + (args.num_gpus or 0)
    if gpus or (args.num_learners or 0) > 1:
        raise ConfigError(
            f"--num-learners={args.num_learners} --num-gpus-per-learner="
            f"{args.num_gpus_per_learner} --num-gpus={args.num_gpus}: hookbus has one numpy "
            f"learner, on the CPU; allowed: --num-learners 0 or 1, no GPUs"
        )
    if args.env is not None and config.env is None:
        config.environment(args.env)
    runners = {
        "num_env_runners": args.num_env_runners,
        "num_envs_per_env_runner": args.num_envs_per_env_runner,
    }
    config.env_runners(**{k: v for k, v in runners.items() if v is not None})
    if args.evaluation_interval > 0:
        config.evaluation(
            evaluation_num_env_runners=args.evaluation_num_env_runners,
            evaluation_interval=args.evaluation_interval,
            evaluation_duration=args.evaluation_duration,
            evaluation_duration_unit=args.evaluation_duration_unit,
            evaluation_parallel_to_training=args.evaluation_parallel_to_training,
        )
    if args.log_level is not None:
        import logging

        logging.getLogger("hookbus").setLevel(args.log_level.replace("WARN", "WARNING"))
    return config


def _success(
    success_metric: Mapping[str, float] | None, stop: Mapping[str, float], args: Any
) -> tuple[str, float]:
    if success_metric:
        return next(iter(success_metric.items()))
    for key in (_EVAL_RETURN, _RETURN):
        if key in stop:
            return key, stop[key]
    return _RETURN, args.stop_reward


def _wants_tune(args: argparse.Namespace) -> bool:
    """Tell whether to run Ray Tune: when it is installed, or when an option needs it."""
    try:
        import ray.tune  # noqa: F401  (Ray without its "tune" extra fails here too)
    except ImportError:
        needs = args.num_samples > 1 or args.checkpoint_freq > 0 or args.checkpoint_at_end
        if needs:
            raise ConfigError(
                "--num-samples, --checkpoint-freq and --checkpoint-at-end run Ray Tune, "
                "which is not installed: pip install 'hookbus[tune]' (or pass --no-tune "
                "and leave them out)"
            ) from None
        return False
    return True


def _run_here(
    config: AlgorithmConfig[Any], args: argparse.Namespace, stop: Mapping[str, float]
) -> dict[str, Any]:
    """Train in this process until a stop criterion is met; print a line per iteration."""
    iterations = int(stop.get(TRAINING_ITERATION, args.stop_iters))
    result: dict[str, Any] = {}
    with config.build() as algo:
        for i in range(iterations):
            result = algo.train()
            line = f"iter={i} R={_lookup(result, _RETURN)}"
            if EVALUATION_RESULTS in result:
                line += f" R(eval)={_lookup(result, _EVAL_RETURN)}"
            print(line)
            met = next((k for k, v in stop.items() if _reached(result, k, v)), None)
            if met is not None:
                print(f"Stop criterion ({met}={stop[met]}) fulfilled!")
                break
    return result


def _run_tune(
    config: AlgorithmConfig[Any],
    args: argparse.Namespace,
    stop: Mapping[str, float],
    trainable: type | None,
    callbacks: list[Any] | None,
    scheduler: Any,
    reporter: Any,
) -> Any:
    from ray import tune

    run_config = tune.RunConfig(
        stop=dict(stop),
        verbose=args.verbose,
        callbacks=callbacks or [],
        checkpoint_config=tune.CheckpointConfig(
            checkpoint_frequency=args.checkpoint_freq, checkpoint_at_end=args.checkpoint_at_end
        ),
        progress_reporter=reporter,
    )
    tune_config = tune.TuneConfig(
        num_samples=args.num_samples,
        max_concurrent_trials=args.max_concurrent_trials,
        scheduler=scheduler,
    )
    tuner = tune.Tuner(
        trainable or config.algo_class,
        param_space=config,
        run_config=run_config,
        tune_config=tune_config,
    )
    return tuner.fit()


def _lookup(result: Mapping[str, Any], key: str) -> Any:
    node: Any = result
    for part in key.split("/"):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _reached(result: Mapping[str, Any], key: str, threshold: float) -> bool:
    value = _lookup(result, key)
    if not isinstance(value, int | float) or isinstance(value, bool) or math.isnan(value):
        return False
    return value >= threshold
