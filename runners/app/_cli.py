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
    UnknownEvent,
    check_lifecycle,
    read_recording,
    read_recording_header,
    replay_into,
)
from hookbus.metrics import MetricsLogger, results

from ._args import ArgumentError, Parser, UsageError, load_object, not_a_file
from ._evaluate_cli import add_evaluate_command
from ._output import print_metrics, printable
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
        # Escaped: a message may quote a file's content (a recording's type names, sources).
        print(f"hookbus {args.command}: error: {printable(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("hookbus: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a callback's or env's own error: one line, status 1
        if args.debug:
            raise
        notes = "; ".join(getattr(exc, "__notes__", []))
        message = f"{type(exc).__name__}: {exc}" + (f" ({notes})" if notes else "")
        print(
            f"hookbus {args.command}: {printable(message)}; --debug shows the traceback",
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
        metavar="FILE.PY:CLASS",
        help="event types of your own the recording holds, as path/to/file.py:Class (or "
        "module:Class for an installed module); nothing a recording names is ever imported",
    )


def _replay(args: argparse.Namespace) -> int:
    _read_header(args.file)  # a foreign file fails here, before any callback runs
    callbacks = [load_object(spec) for spec in args.callbacks]
    types = [load_object(spec) for spec in args.types]
    names = ", ".join(getattr(cb, "__name__", type(cb).__name__) for cb in callbacks)
    # Unknown types come as data, so that replay itself says what it makes of them.
    events = _Tally(read_recording(args.file, types=types, unknown="data"))
    logger = MetricsLogger()
    file = printable(args.file)
    try:
        result = replay_into(
            events, callbacks, hooks=args.hooks, sources=args.sources, metrics_logger=logger
        )
    except RecordingError as exc:
        # What the callbacks made of the valid prefix is worth seeing (docs/recording.md).
        print(f"replayed the valid prefix of {file} into {names or 'no callbacks'}")
        print_metrics(results(logger))
        what = "reading stopped" if exc.unknown_tag is not None else "the file is damaged"
        raise UsageError(f"{what} after the prefix replayed above: {exc}") from exc
    except OSError as exc:
        raise UsageError(f"cannot read {args.file!r}: {exc.strerror}") from exc
    print(f"replayed {result.events} events from {file} into {names or 'no callbacks'}")
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
        # Events of types this process has not defined are shown as the data they are.
        for event in read_recording(args.file, types=types, unknown="data"):
            summary.add(event)
    except RecordingError as exc:
        error = exc
    print(_describe(args.file, header))
    print(summary.report(args.episodes))
    if error is not None:
        raise UsageError(f"the file is damaged after the events above: {error}")
    if args.check:  # a LifecycleError exits 2 with its one line, as any HookbusError
        events = read_recording(args.file, types=types, unknown="data")
        known = (event for event in events if not isinstance(event, UnknownEvent))
        checked = check_lifecycle(known, hooks=header.hooks)
        unchecked = checked.user_events + summary.unknown
        yours = f", {unchecked} of your types unchecked" if unchecked else ""
        print(f"lifecycle: ok ({checked.events} events, {checked.episodes} episodes{yours})")
    return 0


def _describe(path: str, header: RecordingHeader) -> str:
    """Return the header as lines to print; everything it says from the file is escaped."""
    current = "" if header.schema_is_current() else " (differs from this hookbus's)"
    hooks = ", ".join(map(printable, header.hooks)) if header.hooks else "all"
    lines = [
        f"{printable(path)}: hookbus recording, format version {header.format_version}, "
        f"written by hookbus {printable(header.hookbus_version)}, schema "
        f"{printable(header.schema)}{current}",
        f"hooks recorded: {hooks}",
    ]
    if header.event_types:
        names = ", ".join(map(printable, header.event_types.values()))
        lines.append(f"event types of yours: {names}")
    return "\n".join(lines)


def _read_header(path: str) -> RecordingHeader:
    if Path(path).is_dir():
        raise UsageError(f"{path!r} is a directory; give the path of a recording file in it")
    if not Path(path).is_file():  # missing, or a FIFO, a device...: say which
        raise UsageError(not_a_file(path, "a recording file"))
    try:
        return read_recording_header(path)
    except OSError as exc:
        raise UsageError(f"cannot read {path!r}: {exc.strerror}") from exc


_UNKNOWN_LISTED = 10  # events of unknown types shown in full by inspect


class _Summary:
    """Counts per hook and per source, and each episode's length, return and ending.

    Events of types this process has not defined (UnknownEvents) count by tag, and the
    first few are listed with their fields. Every string from the file is escaped when the
    report is made, not when counted: counting stays cheap.
    """

    def __init__(self) -> None:
        self.by_hook: Counter[str] = Counter()
        self.by_source: Counter[str] = Counter()
        self.by_type: Counter[type] = Counter()  # events of the user's own types
        self.by_tag: Counter[str] = Counter()  # events of types not defined here
        self.tag_names: dict[str, str | None] = {}  # tag -> the header's name for its type
        self.unknown = 0
        self.first_unknown: list[UnknownEvent] = []
        self.open: dict[str, list[Any]] = {}
        self.done: list[tuple[str, str, int, float, str]] = []

    def add(self, event: BaseEvent | UnknownEvent) -> None:
        self.by_source[event.source] += 1
        if isinstance(event, UnknownEvent):
            self._add_unknown(event)
            return
        self.by_hook[event.hook] += 1
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

    def _add_unknown(self, event: UnknownEvent) -> None:
        self.unknown += 1
        self.by_tag[event.tag] += 1
        self.tag_names.setdefault(event.tag, event.type_name)
        if len(self.first_unknown) < _UNKNOWN_LISTED:
            self.first_unknown.append(event)

    def report(self, list_episodes: int) -> str:
        lines = [f"{sum(self.by_hook.values()) + self.unknown} events"]
        lines += [f"  {printable(hook):<28} {n:>9}" for hook, n in self.by_hook.items()]
        lines += [f"  {_tag_label(tag):<28} {n:>9}" for tag, n in self.by_tag.items()]
        lines.append("by source:")
        lines += [
            f"  {printable(source):<28} {n:>9}" for source, n in sorted(self.by_source.items())
        ]
        if self.by_type or self.by_tag:
            lines.append("your event types:")
            lines += self._type_lines()
        if self.first_unknown:
            lines += self._unknown_lines()
        lines += self._episode_lines(list_episodes)
        return "\n".join(lines)

    def _type_lines(self) -> list[str]:
        lines = []
        for cls, n in self.by_type.items():
            tag = cls.__struct_config__.tag  # type: ignore[attr-defined]
            name = printable(f"{cls.__name__} ({tag})")
            where = printable(f"{cls.__module__}:{cls.__qualname__}")
            lines.append(f"  {name:<28} {n:>9}  {where}")
        for tag, n in self.by_tag.items():
            listed = self.tag_names[tag]
            where = "not in the header" if listed is None else printable(listed)
            name = f"not defined ({printable(tag)})"
            lines.append(f"  {name:<28} {n:>9}  {where}, read as plain data (--types gives it)")
        return lines

    def _unknown_lines(self) -> list[str]:
        lines = [f"events of types not defined here (the first {len(self.first_unknown)}):"]
        for event in self.first_unknown:
            fields = printable(repr(event.fields))
            fields = fields if len(fields) <= 100 else fields[:97] + "..."
            lines.append(
                f"  {printable(event.tag)}  source {printable(event.source)}  seq {event.seq}"
                f"  {fields}"
            )
        if self.unknown > len(self.first_unknown):
            lines.append(f"  ... {self.unknown - len(self.first_unknown)} more")
        return lines

    def _episode_lines(self, list_episodes: int) -> list[str]:
        lengths = [d[2] for d in self.done]
        returns = [d[3] for d in self.done]
        lines = [f"episodes: {len(self.done)} finished, {len(self.open)} unfinished"]
        if self.done:
            lines.append(
                f"  return mean {statistics.fmean(returns):.2f} (min {min(returns):g}, "
                f"max {max(returns):g}); length mean {statistics.fmean(lengths):.1f} "
                f"(min {min(lengths)}, max {max(lengths)})"
            )
            for episode_id, source, length, ret, ending in self.done[:list_episodes]:
                lines.append(
                    f"  {printable(episode_id[:12])}  {printable(source):<16} len {length:>5}  "
                    f"return {ret:>9.2f}  {ending}"
                )
            if len(self.done) > list_episodes > 0:
                lines.append(f"  ... {len(self.done) - list_episodes} more")
        return lines


def _tag_label(tag: str) -> str:
    """Name a hook whose type is not defined here by its events' tag: the hook is unknown."""
    return f"? (tag {printable(tag)})"


def _version() -> str:
    try:
        return version("hookbus")
    except PackageNotFoundError:  # pragma: no cover - a bare source tree
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
