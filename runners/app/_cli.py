"""The ``hookbus`` command: train with callbacks, inspect and replay recordings, from the shell.

Bad input (an unknown env, algorithm, hook or option value, a file that cannot be read or
written) exits with status 2 and one line on stderr; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from msgspec import UNSET

from hookbus.events import HOOKS, BaseEvent, EpisodeEnd, EpisodeStart, EpisodeStep
from hookbus.kernel import (
    HookbusError,
    RecordingError,
    RecordingHeader,
    check_lifecycle,
    read_recording,
    read_recording_header,
    replay_into,
)
from hookbus.metrics import MetricsLogger, results

from ._args import ArgumentError, Parser, UsageError, load_object
from ._evaluate_cli import add_evaluate_command
from ._output import print_metrics
from ._plot_cli import add_plot_command
from ._settings_cli import add_settings_command
from ._train import add_train_command
from ._tune_cli import add_tune_command

__all__ = ("main",)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``hookbus`` command; return its exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except ArgumentError as exc:
        print(f"{exc.prog}: error: {exc}; {exc.prog} --help lists the options", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help and --version print, then "exit"
        return int(exc.code or 0)
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
    parser = Parser(prog="hookbus", description="hookbus from the shell.")
    parser.add_argument("--version", action="version", version=f"hookbus {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_train_command(commands)
    add_tune_command(commands)
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
    _add_types_option(replay)
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
    inspect.add_argument(
        "--check", action="store_true", help="also check the hook contract (check_lifecycle)"
    )
    _add_types_option(inspect)
    inspect.add_argument("--debug", action="store_true", help="show tracebacks")
    inspect.set_defaults(run=_inspect)
    add_evaluate_command(commands)
    add_plot_command(commands)
    add_settings_command(commands)
    return parser


def _add_types_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--types",
        nargs="+",
        default=[],
        metavar="MOD:CLASS",
        help="event types of your own the recording holds, when the names its header "
        "records do not import (module:Class or path/to/file.py:Class)",
    )


def _replay(args: argparse.Namespace) -> int:
    _read_header(args.file)  # a foreign file fails here, before any callback runs
    callbacks = [load_object(spec) for spec in args.callbacks]
    types = [load_object(spec) for spec in args.types]
    names = ", ".join(getattr(cb, "__name__", type(cb).__name__) for cb in callbacks)
    events = _Tally(read_recording(args.file, types=types))
    logger = MetricsLogger()
    try:
        result = replay_into(
            events, callbacks, hooks=args.hooks, sources=args.sources, metrics_logger=logger
        )
    except RecordingError as exc:
        # What the callbacks made of the valid prefix is worth seeing (docs/recording.md).
        print(f"replayed the valid prefix of {args.file} into {names or 'no callbacks'}")
        print_metrics(results(logger))
        what = "reading stopped" if exc.missing_type is not None else "the file is damaged"
        raise UsageError(f"{what} after the prefix replayed above: {exc}") from exc
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
    types = [load_object(spec) for spec in args.types]
    summary = _Summary()
    error: RecordingError | None = None
    try:
        for event in read_recording(args.file, types=types):
            summary.add(event)
    except RecordingError as exc:
        error = exc
    print(
        f"{args.file}: hookbus recording, format version {header.format_version}, written "
        f"by hookbus {header.hookbus_version}, schema {header.schema}"
        + ("" if header.schema_is_current() else " (differs from this hookbus's)")
    )
    print(f"hooks recorded: {', '.join(header.hooks) if header.hooks else 'all'}")
    if header.event_types:
        print(f"event types of yours: {', '.join(header.event_types.values())}")
    print(summary.report(args.episodes))
    if error is not None and error.missing_type is not None:
        raise UsageError(f"reading stopped after the events above: {error}")
    if error is not None:
        raise UsageError(f"the file is damaged after the events above: {error}")
    if args.check:  # a LifecycleError exits 2 with its one line, as any HookbusError
        events = read_recording(args.file, types=types)
        checked = check_lifecycle(events, hooks=header.hooks)
        yours = f", {checked.user_events} of your types unchecked" if checked.user_events else ""
        print(f"lifecycle: ok ({checked.events} events, {checked.episodes} episodes{yours})")
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
        self.by_type: Counter[type] = Counter()  # events of the user's own types
        self.open: dict[str, list[Any]] = {}
        self.done: list[tuple[str, str, int, float, str]] = []

    def add(self, event: BaseEvent) -> None:
        self.by_hook[event.hook] += 1
        self.by_source[event.source] += 1
        if event.hook not in HOOKS:
            self.by_type[type(event)] += 1
        if isinstance(event, EpisodeStart):
            self.open[event.episode_id] = [0, 0.0]
        elif isinstance(event, EpisodeStep):  # every step, the one that ends it included
            tally = self.open.setdefault(event.episode_id, [0, 0.0])
            tally[0] += 1
            if event.agents is None:
                tally[1] += event.reward
            else:  # a multi-agent step: its agents' rewards
                tally[1] += sum(a.reward for a in event.agents if a.reward is not UNSET)
        elif isinstance(event, EpisodeEnd):
            tally = self.open.pop(event.episode_id, [0, 0.0])
            ending = "terminated" if event.terminated else "truncated"
            self.done.append((event.episode_id, event.source, tally[0], tally[1], ending))

    def report(self, list_episodes: int) -> str:
        lines = [f"{sum(self.by_hook.values())} events"]
        lines += [f"  {hook:<28} {n:>9}" for hook, n in self.by_hook.items()]
        lines.append("by source:")
        lines += [f"  {source:<28} {n:>9}" for source, n in sorted(self.by_source.items())]
        if self.by_type:
            lines.append("your event types:")
            for cls, n in self.by_type.items():
                tag = cls.__struct_config__.tag  # type: ignore[attr-defined]
                name = f"{cls.__name__} ({tag})"
                lines.append(f"  {name:<28} {n:>9}  {cls.__module__}:{cls.__qualname__}")
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


def _version() -> str:
    try:
        return version("hookbus")
    except PackageNotFoundError:  # pragma: no cover - a bare source tree
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
