"""``hookbus plot``: learning curves from run directories, as a PNG.

Registered by ``_cli`` on its sub-command parser; bad input raises ``ConfigError`` from
``plot_runs``, which ``_cli.main`` turns into one line and exit status 2.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..reporting import DEFAULT_METRIC, STEP_KEY as DEFAULT_X, plot_runs

if TYPE_CHECKING:
    from ._args import Commands

__all__ = ("add_plot_command",)


def add_plot_command(commands: Commands) -> None:
    """Add the ``plot`` sub-command to ``commands`` (what ``add_subparsers()`` returned)."""
    plot = commands.add_parser(
        "plot",
        help="draw learning curves from run directories",
        description=(
            "Draw learning curves from each run directory's result.jsonl: one line per run, "
            "or with --mean their mean and min-max band (seeds)."
        ),
    )
    plot.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="run directories (--logdir)")
    plot.add_argument(
        "--metric",
        nargs="+",
        default=[DEFAULT_METRIC],
        metavar="KEY",
        help=f"flattened result keys, one panel each (default {DEFAULT_METRIC})",
    )
    plot.add_argument("--x", default=DEFAULT_X, metavar="KEY", help=f"default {DEFAULT_X}")
    plot.add_argument(
        "--mean",
        action="store_true",
        help="draw the runs' mean with a min-max band, on the x values all of them cover",
    )
    plot.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="FILE",
        help="default curve.png in the run directory (of several: in the folder holding them)",
    )
    plot.add_argument("--title", default=None, help="default: the runs' names")
    plot.add_argument("--debug", action="store_true", help="show tracebacks")
    plot.set_defaults(run=_plot)


def _plot(args: argparse.Namespace) -> int:
    path = plot_runs(
        args.run_dirs,
        metrics=args.metric,
        x=args.x,
        mean=args.mean,
        output=args.output,
        title=args.title,
    )
    runs = len(args.run_dirs)
    print(f"wrote {path}: {', '.join(args.metric)} of {runs} run{'' if runs == 1 else 's'}")
    return 0
