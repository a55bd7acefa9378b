"""``hookbus settings``: every setting an algorithm takes, from the settings' declarations."""

from __future__ import annotations

import argparse
from typing import Any

from ..config import AlgorithmConfig, settings_markdown, settings_rows
from ._experiment import ALGORITHMS, config_class

__all__ = ("add_settings_command",)


def add_settings_command(commands: Any) -> None:
    """Add the ``settings`` sub-command to ``commands`` (what ``add_subparsers()`` returned)."""
    settings = commands.add_parser(
        "settings",
        help="list the settings an algorithm takes, with defaults and what they take",
        description="List every setting (section, name, type, default, what it takes).",
    )
    settings.add_argument(
        "--algo", type=str.upper, choices=ALGORITHMS, default="PPO", help="PPO (default) or DQN"
    )
    settings.add_argument(
        "--markdown",
        action="store_true",
        help="print docs/settings.md: every algorithm's settings as Markdown tables",
    )
    settings.add_argument("--debug", action="store_true", help="show tracebacks")
    settings.set_defaults(run=_settings)


def _settings(args: argparse.Namespace) -> int:
    if args.markdown:
        print(settings_markdown(AlgorithmConfig, [config_class(a) for a in ALGORITHMS]), end="")
        return 0
    infos = list(config_class(args.algo).setting_infos())
    for info, (_, _, default, takes, doc) in zip(infos, settings_rows(infos), strict=True):
        print(f"{info.section}.{info.name} = {default}")
        print(f"    {doc}" + (f"; takes {takes}" if takes else ""))
    return 0
