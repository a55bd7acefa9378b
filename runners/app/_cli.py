"""The ``hookbus`` command: train with callbacks, inspect and replay recordings, from the shell.

Bad input (an unknown env, algorithm, hook or option value, a file that cannot be read or
written) exits with status 2 and one line on stderr; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Iterator, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from hookbus.events import event_types
from hookbus.kernel import (
    HookbusError,
    LifecycleSummary,
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
from ._inspect_summary import Summary
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
    summary = Summary(args.episodes)  # bounded memory, whatever the file holds
    error: RecordingError | None = None
    try:
        # Events of types this process has not defined are shown as the data they are.
        for event in read_recording(args.file, types=types, unknown="data"):
            summary.add(event)
    except RecordingError as exc:
        error = exc
    print(_describe(args.file, header))
    print(summary.report())
    if error is not None:
        raise UsageError(f"the file is damaged after the events above: {error}")
    if args.check:  # a LifecycleError exits 2 with its one line, as any HookbusError
        hooks = _checked_hooks(header)
        events = read_recording(args.file, types=types, unknown="data")
        known = (event for event in events if not isinstance(event, UnknownEvent))
        checked = check_lifecycle(known, hooks=hooks)
        unchecked = checked.user_events + summary.unknown
        yours = f", {unchecked} of your types unchecked" if unchecked else ""
        print(f"lifecycle: ok ({checked.events} events, {checked.episodes} episodes{yours})")
        for line in _untracked(checked):
            print(line)
    return 0


def _checked_hooks(header: RecordingHeader) -> list[str] | None:
    """Return the hooks the header says were recorded; one that no type here has is bad
    input, and the message says the name is the file's."""
    known = event_types()  # the hooks', and those of the types defined here (--types)
    for name in header.hooks or ():
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise UsageError(
                f"hook {name[:80]!r} named in the file's header is not a known hook{hint}, so "
                "the events cannot be checked against the hooks the file says it recorded; "
                "if it is the hook of a type of yours, give the type with --types"
            )
    return header.hooks


def _untracked(checked: LifecycleSummary) -> list[str]:
    """Say what the check counted without checking it (a stream past its bounds)."""
    lines = []
    if checked.unchecked_events:
        lines.append(
            f"  {checked.unchecked_events} events of sources past the first "
            f"{len(checked.sources):,} were counted, not checked (the check tracks that many)"
        )
    if checked.dropped_episodes:
        lines.append(
            f"  {checked.dropped_episodes} episodes were dropped by the check while open "
            "(more were open at once than it tracks)"
        )
    return lines


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
    unknown = [h for h in header.hooks or () if h not in event_types()]
    if unknown:
        names = ", ".join(printable(repr(h[:80])) for h in unknown[:5])
        lines.append(f"  named in the header but not known hooks here: {names}")
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


def _version() -> str:
    try:
        return version("hookbus")
    except PackageNotFoundError:  # pragma: no cover - a bare source tree
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
