"""RLlib's example-script options: ``add_rllib_example_script_args``, with RLlib's names.

Scripts read ``args.<name>`` for these, so every option RLlib's helper defines is here with
its default; those with no meaning in hookbus are accepted and say so in their help, or
are refused when used by ``run_rllib_example_script_experiment`` (docs/migrating.md).
"""

from __future__ import annotations

import argparse

__all__ = ("add_rllib_example_script_args",)


def add_rllib_example_script_args(
    parser: argparse.ArgumentParser | None = None,
    default_reward: float = 100.0,
    default_iters: int = 200,
    default_timesteps: int = 100000,
) -> argparse.ArgumentParser:
    """Add RLlib's example-script options to ``parser`` (a new one if None); return it.

    The options, names and defaults are RLlib's, so that a script's ``args.<name>`` reads
    work; those with no meaning here are accepted and say so in their help.
    """
    # A script may add an option of these again (older scripts define their own
    # --evaluation-duration): a parser made here lets the later definition win.
    p = parser if parser is not None else argparse.ArgumentParser(conflict_handler="resolve")
    _algorithm_options(p)
    _evaluation_options(p)
    _run_options(p)
    p.add_argument(
        "--stop-reward",
        type=float,
        default=default_reward,
        help="stop once env_runners/episode_return_mean reaches this",
    )
    p.add_argument(
        "--stop-iters",
        type=int,
        default=default_iters,
        help="stop after this many training iterations",
    )
    p.add_argument(
        "--stop-timesteps",
        type=int,
        default=default_timesteps,
        help="stop after this many env steps sampled",
    )
    p.add_argument(
        "--as-test",
        action="store_true",
        help="fail (ValueError) unless the success metric is reached",
    )
    p.add_argument("--as-release-test", action="store_true", help="as --as-test")
    return p


def _algorithm_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--algo", type=str, default="PPO", help="the algorithm's registered name")
    p.add_argument(
        "--enable-new-api-stack",
        action="store_true",
        help="accepted; hookbus has only RLlib's new API stack",
    )
    p.add_argument(
        "--framework",
        choices=["numpy", "torch", "tf", "tf2"],
        default="numpy",
        help="accepted; hookbus's learners are numpy whatever is given",
    )
    p.add_argument(
        "--env", type=str, default=None, help="the env to use when the config names none"
    )
    p.add_argument("--num-env-runners", type=int, default=None, help="remote EnvRunners")
    p.add_argument(
        "--num-envs-per-env-runner",
        type=int,
        default=None,
        help="sub-envs per EnvRunner (the batch of each forward pass)",
    )
    p.add_argument(
        "--num-agents",
        type=int,
        default=0,
        help="for scripts that make a multi-agent env of N copies (0: single)",
    )
    p.add_argument(
        "--num-learners",
        type=int,
        default=None,
        help="0 or 1: hookbus has one learner, in the driver",
    )
    p.add_argument(
        "--num-gpus-per-learner",
        type=float,
        default=None,
        help="0 or unset: hookbus's learners run on the CPU",
    )
    p.add_argument("--num-gpus", type=int, default=0, help="0: as --num-gpus-per-learner")
    p.add_argument("--num-cpus", type=int, default=0, help="accepted (Ray's own setting)")
    p.add_argument("--local-mode", action="store_true", help="accepted (Ray's own setting)")


def _evaluation_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--evaluation-num-env-runners", type=int, default=0, help="remote evaluation EnvRunners"
    )
    p.add_argument(
        "--evaluation-interval", type=int, default=0, help="evaluate every N iterations (0: never)"
    )
    p.add_argument(
        "--evaluation-duration",
        type=_duration,
        default=10,
        help='episodes or timesteps per evaluation round, or "auto"',
    )
    p.add_argument(
        "--evaluation-duration-unit",
        type=str,
        default="episodes",
        choices=["episodes", "timesteps"],
        help="the unit of --evaluation-duration",
    )
    p.add_argument(
        "--evaluation-parallel-to-training",
        action="store_true",
        help="evaluate while the training step runs",
    )


def _run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--output", type=str, default=None, help="refused: hookbus writes no offline data"
    )
    p.add_argument(
        "--log-level",
        type=str,
        default=None,
        choices=["INFO", "DEBUG", "WARN", "ERROR"],
        help="the hookbus logger's level",
    )
    p.add_argument(
        "--no-tune",
        action="store_true",
        help="call algo.train() in a loop here instead of running Ray Tune",
    )
    p.add_argument("--num-samples", type=int, default=1, help="Tune trials")
    p.add_argument("--max-concurrent-trials", type=int, default=None, help="Tune trials at once")
    p.add_argument("--verbose", type=int, default=2, help="Tune's verbosity")
    p.add_argument(
        "--checkpoint-freq", type=int, default=0, help="Tune: checkpoint every N iterations"
    )
    p.add_argument(
        "--checkpoint-at-end", action="store_true", help="Tune: checkpoint when the trial ends"
    )
    for name in ("--wandb-key", "--wandb-project", "--wandb-run-name"):
        p.add_argument(name, type=str, default=None, help="accepted; no WandB upload")


def _duration(value: str) -> int | str:
    return value if value == "auto" else int(value)
