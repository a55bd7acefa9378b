"""The ``hookbus`` command: ``hookbus train`` runs training with callbacks from the shell."""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from hookbus.kernel import HookbusError

__all__ = ("main",)

ALGORITHMS = ("PPO",)
_BUILTIN_ENV_RUNNER_KEYS = {
    "episode_return_mean",
    "episode_return_min",
    "episode_return_max",
    "episode_len_mean",
    "episode_len_min",
    "episode_len_max",
    "num_episodes",
    "num_episodes_lifetime",
    "num_env_steps_sampled",
    "num_env_steps_sampled_lifetime",
}


class UsageError(Exception):
    """Bad command-line input: one line to stderr, exit status 2."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``hookbus`` command; return its exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except (UsageError, HookbusError) as exc:
        if args.debug:
            raise
        print(f"hookbus {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("hookbus: interrupted", file=sys.stderr)
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hookbus", description="hookbus from the shell.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    train = commands.add_parser(
        "train", help="train an algorithm with callbacks", description="Train with callbacks."
    )
    train.add_argument("--env", required=True, help="gymnasium env id, e.g. CartPole-v1")
    train.add_argument("--algo", default="PPO", help=f"one of {', '.join(ALGORITHMS)}")
    train.add_argument("--iterations", type=_positive_int, default=20, metavar="N")
    train.add_argument(
        "--callbacks",
        nargs="+",
        default=[],
        metavar="MOD:CLASS",
        help="callback classes as module:Class or path/to/file.py:Class, in chain order",
    )
    train.add_argument("--num-env-runners", type=int, default=0, metavar="N")
    train.add_argument("--num-envs-per-env-runner", type=int, default=1, metavar="N")
    train.add_argument("--backend", default="inline", help="inline (default) or process")
    train.add_argument("--seed", type=int, default=None)
    train.add_argument("--debug", action="store_true", help="show tracebacks")
    train.set_defaults(run=_train)
    return parser


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _train(args: argparse.Namespace) -> int:
    config = _config_for(args.algo)
    callbacks = [load_object(spec) for spec in args.callbacks]
    config = (
        config.environment(args.env)
        .env_runners(
            num_env_runners=args.num_env_runners,
            num_envs_per_env_runner=args.num_envs_per_env_runner,
            backend=args.backend,
        )
        .callbacks(callbacks)
        .debugging(seed=args.seed)
    )
    names = ", ".join(getattr(cb, "__name__", type(cb).__name__) for cb in callbacks) or "none"
    out = sys.stdout
    print(
        f"hookbus: {args.algo} on {args.env}, {args.iterations} iterations, callbacks: {names}",
        file=out,
        flush=True,
    )
    rows = []
    with config.build() as algo:
        start = time.perf_counter()
        for _ in range(args.iterations):
            result = algo.train()
            rows.append(result)
            _progress(out, result, args.iterations, time.perf_counter() - start)
    if out.isatty():
        print(file=out)
    print(_table(rows), file=out)
    return 0


def _config_for(algo: str) -> Any:
    from hookbus.runners import PPOConfig

    configs = {"PPO": PPOConfig}
    try:
        return configs[algo.upper()]()
    except KeyError:
        raise UsageError(f"unknown algorithm {algo!r}; available: {', '.join(configs)}") from None


def load_object(spec: str) -> Any:
    """Import ``module:attr`` or ``path/to/file.py:attr`` and return the attribute."""
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"{spec!r} is not module:Class or path/to/file.py:Class")
    if module_name.endswith(".py"):
        path = Path(module_name).resolve()
        if not path.is_file():
            raise UsageError(f"{spec!r}: no such file {module_name!r}")
        # Import by name from the file's folder, so worker processes can import it too.
        sys.path.insert(0, str(path.parent))
        module_name = path.stem
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"{spec!r}: cannot import {module_name!r} ({exc})") from exc
    obj = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise UsageError(f"{spec!r}: {module_name!r} has no attribute {attr!r}") from None
    return obj


def _progress(out: TextIO, result: dict[str, Any], total: int, elapsed: float) -> None:
    i = result["training_iteration"]
    runners = result.get("env_runners", {})
    width = 20
    done = round(width * i / total)
    bar = "#" * done + "." * (width - done)
    line = (
        f"[{bar}] {i:>{len(str(total))}}/{total}  "
        f"return {runners.get('episode_return_mean', float('nan')):8.2f}  "
        f"steps {result.get('num_env_steps_sampled_lifetime', 0):>8}  "
        f"{elapsed / i:5.2f}s/it"
    )
    if out.isatty():
        print("\r" + line, end="", file=out, flush=True)
    else:
        print(line, file=out, flush=True)


def _table(rows: list[dict[str, Any]]) -> str:
    custom = sorted(
        {k for r in rows for k in r.get("env_runners", {}) if k not in _BUILTIN_ENV_RUNNER_KEYS}
    )
    headers = ["iter", "return_mean", "len_mean", "episodes", "env_steps", *custom]
    lines = []
    for r in rows:
        er = r.get("env_runners", {})
        cells = [
            r["training_iteration"],
            er.get("episode_return_mean"),
            er.get("episode_len_mean"),
            er.get("num_episodes_lifetime"),
            r.get("num_env_steps_sampled_lifetime"),
            *(er.get(k) for k in custom),
        ]
        lines.append([_cell(c) for c in cells])
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(headers)]
    out = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))]
    out.append("  ".join("-" * w for w in widths))
    out += ["  ".join(c.rjust(w) for c, w in zip(line, widths, strict=True)) for line in lines]
    return "\n".join(out)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


if __name__ == "__main__":
    sys.exit(main())
