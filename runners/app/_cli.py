"""The ``hookbus`` command: train with callbacks, inspect and replay recordings, from the shell.

Bad input (an unknown env, algorithm, hook or option value, a file that cannot be read or
written) exits with status 2 and one line on stderr; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

from hookbus.events import EpisodeEnd, EpisodeStart, EpisodeStep
from hookbus.kernel import (
    HookbusError,
    Recorder,
    RecordingError,
    RecordingHeader,
    read_recording,
    read_recording_header,
    replay_into,
)
from hookbus.metrics import MetricsLogger, results

from ._output import print_metrics, progress, table

__all__ = ("main",)

ALGORITHMS = ("PPO", "DQN")
RECORDING_FORMATS = {".msgpack": "msgpack", ".jsonl": "jsonl"}


class UsageError(Exception):
    """Bad command-line input: one line to stderr, exit status 2."""


class _ArgumentError(UsageError):
    def __init__(self, prog: str, message: str) -> None:
        super().__init__(message)
        self.prog = prog


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (no usage block), raised to ``main``."""

    def error(self, message: str) -> NoReturn:
        raise _ArgumentError(self.prog, message)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``hookbus`` command; return its exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except _ArgumentError as exc:
        print(f"{exc.prog}: error: {exc}; {exc.prog} --help lists the options", file=sys.stderr)
        return 2
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
    except Exception as exc:  # a callback's or env's own error: one line, status 1
        if args.debug:
            raise
        notes = "; ".join(getattr(exc, "__notes__", []))
        print(
            f"hookbus {args.command}: {type(exc).__name__}: {exc}"
            + (f" ({notes})" if notes else "")
            + "; --debug shows the traceback",
            file=sys.stderr,
        )
        return 1


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="hookbus", description="hookbus from the shell.")
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
    train.add_argument(
        "--record",
        metavar="FILE",
        help="record every event to FILE, as msgpack (FILE.msgpack) or JSON lines (FILE.jsonl)",
    )
    train.add_argument(
        "--format",
        choices=sorted(set(RECORDING_FORMATS.values())),
        default=None,
        help="the recording's format, whatever FILE's extension",
    )
    train.add_argument("--debug", action="store_true", help="show tracebacks")
    train.set_defaults(run=_train)

    replay = commands.add_parser(
        "replay",
        help="replay a recording into callbacks and print their metrics",
        description="Replay a recording into callbacks; print the metrics they log.",
    )
    replay.add_argument("file", help="a recording (.msgpack or .jsonl)")
    replay.add_argument(
        "--callbacks",
        nargs="+",
        default=[],
        metavar="MOD:CLASS",
        help="callback classes as module:Class or path/to/file.py:Class",
    )
    replay.add_argument(
        "--hooks", nargs="+", default=None, metavar="HOOK", help="publish only these hooks"
    )
    replay.add_argument(
        "--sources",
        nargs="+",
        default=None,
        metavar="SOURCE",
        help="publish only events of these sources, e.g. env_runner:0",
    )
    replay.add_argument("--debug", action="store_true", help="show tracebacks")
    replay.set_defaults(run=_replay)

    inspect = commands.add_parser(
        "inspect",
        help="summarise a recording",
        description="Print a recording's header, event counts, and episodes.",
    )
    inspect.add_argument("file", help="a recording (.msgpack or .jsonl)")
    inspect.add_argument(
        "--episodes",
        type=int,
        default=10,
        metavar="N",
        help="list the first N episodes (default 10; 0 for none)",
    )
    inspect.add_argument("--debug", action="store_true", help="show tracebacks")
    inspect.set_defaults(run=_inspect)
    return parser


def _positive_int(text: str) -> int:
    # argparse names the option; its own message for a ValueError would name this function.
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value}")
    return value


def _train(args: argparse.Namespace) -> int:
    config = _config_for(args.algo)
    callbacks = [load_object(spec) for spec in args.callbacks]
    if args.record:
        callbacks.insert(0, _recorder(args.record, args.format))
    elif args.format:
        raise UsageError("--format applies to --record FILE, which is missing")
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
    rows: list[dict[str, Any]] = []
    interrupted = False
    with config.build() as algo:
        start = time.perf_counter()
        try:
            for _ in range(args.iterations):
                rows.append(algo.train())
                progress(out, rows[-1], args.iterations, time.perf_counter() - start)
        except KeyboardInterrupt:  # Ctrl-C: stop the Algorithm, then show what was done
            interrupted = True
    if out.isatty():
        print(file=out)
    print(table(rows), file=out)
    if interrupted:
        done = f"{len(rows)} iteration{'' if len(rows) == 1 else 's'}"
        print(f"hookbus train: interrupted after {done}", file=sys.stderr)
        return 130
    return 0


def _recorder(path: str, format: str | None) -> Recorder:
    if Path(path).is_dir():
        raise UsageError(f"--record {path!r} is a directory; give a file path, e.g. run.msgpack")
    if format is None:
        format = RECORDING_FORMATS.get(Path(path).suffix)
        if format is None:
            raise UsageError(
                f"cannot tell the recording format of {path!r} from its extension; name it "
                f"{' or '.join('*' + ext for ext in RECORDING_FORMATS)}, or pass --format"
            )
    try:
        return Recorder(path, format=format)
    except OSError as exc:
        raise UsageError(f"cannot write {path!r}: {exc.strerror}") from exc


def _replay(args: argparse.Namespace) -> int:
    _read_header(args.file)  # a foreign file fails here, before any callback runs
    callbacks = [load_object(spec) for spec in args.callbacks]
    names = ", ".join(getattr(cb, "__name__", type(cb).__name__) for cb in callbacks)
    events = _Tally(read_recording(args.file))
    logger = MetricsLogger()
    try:
        result = replay_into(
            events, callbacks, hooks=args.hooks, sources=args.sources, metrics_logger=logger
        )
    except RecordingError as exc:
        # What the callbacks made of the valid prefix is worth seeing (docs/recording.md).
        print(f"replayed the valid prefix of {args.file} into {names or 'no callbacks'}")
        print_metrics(results(logger))
        raise UsageError(f"the file is damaged after the prefix replayed above: {exc}") from exc
    except OSError as exc:
        raise UsageError(f"cannot read {args.file!r}: {exc.strerror}") from exc
    print(f"replayed {result.events} events from {args.file} into {names or 'no callbacks'}")
    print_metrics(result.metrics)
    _check_filters(args, events.sources, result.events)
    return 0


class _Tally:
    """Pass events through, noting the sources seen (to tell which --sources matched none)."""

    def __init__(self, events: Iterator[Any]) -> None:
        self.events = events
        self.sources: set[str] = set()

    def __iter__(self) -> Iterator[Any]:
        for event in self.events:
            self.sources.add(event.source)
            yield event


def _check_filters(args: argparse.Namespace, recorded: set[str], published: int) -> None:
    unmatched = [s for s in args.sources or () if s not in recorded]
    if unmatched:
        raise UsageError(
            f"--sources {' '.join(map(repr, unmatched))} matched no events; the recording's "
            f"sources are {', '.join(sorted(recorded)) or 'none'}"
        )
    given = (("--hooks", args.hooks), ("--sources", args.sources))
    filters = [f"{option} {' '.join(values)}" for option, values in given if values]
    if published == 0 and filters:
        raise UsageError(f"no recorded event matched {' '.join(filters)}")


def _inspect(args: argparse.Namespace) -> int:
    header = _read_header(args.file)
    summary = _Summary()
    error: RecordingError | None = None
    try:
        for event in read_recording(args.file):
            summary.add(event)
    except RecordingError as exc:
        error = exc
    print(
        f"{args.file}: hookbus recording, format version {header.format_version}, written "
        f"by hookbus {header.hookbus_version}, schema {header.schema}"
        + ("" if header.schema_is_current() else " (differs from this hookbus's)")
    )
    print(f"hooks recorded: {', '.join(header.hooks) if header.hooks else 'all'}")
    print(summary.report(args.episodes))
    if error is not None:
        raise UsageError(f"the file is damaged after the events above: {error}")
    return 0


def _read_header(path: str) -> RecordingHeader:
    if Path(path).is_dir():
        raise UsageError(f"{path!r} is a directory; give the path of a recording file in it")
    if not Path(path).is_file():
        raise UsageError(f"no such file {path!r}")
    try:
        return read_recording_header(path)
    except OSError as exc:
        raise UsageError(f"cannot read {path!r}: {exc.strerror}") from exc


class _Summary:
    """Counts per hook and per source, and each episode's length, return and ending."""

    def __init__(self) -> None:
        self.by_hook: Counter[str] = Counter()
        self.by_source: Counter[str] = Counter()
        self.open: dict[str, list[Any]] = {}
        self.done: list[tuple[str, str, int, float, str]] = []

    def add(self, event: Any) -> None:
        self.by_hook[event.hook] += 1
        self.by_source[event.source] += 1
        if isinstance(event, EpisodeStart):
            self.open[event.episode_id] = [0, 0.0]
        elif isinstance(event, EpisodeStep):  # every step, the one that ends it included
            tally = self.open.setdefault(event.episode_id, [0, 0.0])
            tally[0] += 1
            tally[1] += event.reward
        elif isinstance(event, EpisodeEnd):
            tally = self.open.pop(event.episode_id, [0, 0.0])
            ending = "terminated" if event.terminated else "truncated"
            self.done.append((event.episode_id, event.source, tally[0], tally[1], ending))

    def report(self, list_episodes: int) -> str:
        lines = [f"{sum(self.by_hook.values())} events"]
        lines += [f"  {hook:<28} {n:>9}" for hook, n in self.by_hook.items()]
        lines.append("by source:")
        lines += [f"  {source:<28} {n:>9}" for source, n in sorted(self.by_source.items())]
        lengths = [d[2] for d in self.done]
        returns = [d[3] for d in self.done]
        lines.append(f"episodes: {len(self.done)} finished, {len(self.open)} unfinished")
        if self.done:
            lines.append(
                f"  return mean {statistics.fmean(returns):.2f} (min {min(returns):g}, "
                f"max {max(returns):g}); length mean {statistics.fmean(lengths):.1f} "
                f"(min {min(lengths)}, max {max(lengths)})"
            )
            for episode_id, source, length, ret, ending in self.done[:list_episodes]:
                lines.append(
                    f"  {episode_id[:12]}  {source:<16} len {length:>5}  return "
                    f"{ret:>9.2f}  {ending}"
                )
            if len(self.done) > list_episodes > 0:
                lines.append(f"  ... {len(self.done) - list_episodes} more")
        return "\n".join(lines)


def _config_for(algo: str) -> Any:
    from hookbus.runners import DQNConfig, PPOConfig

    configs = {"PPO": PPOConfig, "DQN": DQNConfig}
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


if __name__ == "__main__":
    sys.exit(main())
