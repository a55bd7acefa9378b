"""``hookbus train``: build a config, train until a stop condition, checkpoint as asked."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hookbus.kernel import Recorder

from ..algorithm import hold_back_code, list_checkpoints, read_stored_config, refuse_held_back
from ..backends import BACKENDS
from ..reporting import run_traces
from ._args import UsageError, load_object, positive_int
from ._experiment import (
    ALGORITHMS,
    StopConditions,
    config_class,
    parse_override,
    read_config_file,
    shown,
)
from ._output import progress, table

if TYPE_CHECKING:
    from ..algorithm import Algorithm
    from ._args import Commands

__all__ = ("add_train_command",)

RECORDING_FORMATS = {".msgpack": "msgpack", ".jsonl": "jsonl"}
# How to give a setting that a --restore checkpoint stores as code to import (refused there).
_RESTORE_HOW = {
    "env": "pass --env (e.g. --env path/to/file.py:MyEnv) to restore it",
    "evaluation_config": "pass --set evaluation_config='{...}' (or --config FILE) to restore it",
}


def add_train_command(commands: Commands) -> None:
    """Add ``train`` and its options to the sub-command parsers ``commands``."""
    train = commands.add_parser(
        "train",
        help="train an algorithm with callbacks",
        description="Train with callbacks. Settings apply in this order, later ones "
        "winning: defaults, --config, --set, then the options below.",
    )
    train.add_argument(
        "--env",
        help="a gymnasium id (CartPole-v1), module:EnvId, module:EnvClass or file.py:EnvClass",
    )
    train.add_argument("--algo", type=str.upper, choices=ALGORITHMS, help="PPO (default) or DQN")
    train.add_argument("--config", metavar="FILE", help="settings by section (.toml/.yaml/.json)")
    train.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE",
        help="one setting, e.g. lr=0.001 or training.model='{\"fcnet_hiddens\": [32]}'",
    )  # fmt: skip
    train.add_argument(
        "--stop", action="append", default=[], metavar="KEY=VALUE",
        help="stop when a result key reaches VALUE, e.g. env_runners/episode_return_mean=450 "
        "or timesteps=200000 (any one suffices)",
    )  # fmt: skip
    train.add_argument(
        "--iterations", type=positive_int, metavar="N",
        help="stop at training_iteration N (default 20 when no --stop is given)",
    )  # fmt: skip
    train.add_argument(
        "--callbacks", nargs="+", default=[], metavar="MOD:CLASS",
        help="callback classes as module:Class or path/to/file.py:Class, in chain order",
    )  # fmt: skip
    train.add_argument(
        "--plugin", action="append", default=[], metavar="NAME",
        help="an installed plugin (entry point group hookbus.plugins) to add, by name",
    )  # fmt: skip
    train.add_argument("--num-env-runners", type=int, metavar="N")
    train.add_argument("--num-envs-per-env-runner", type=int, metavar="N")
    train.add_argument("--backend", choices=list(BACKENDS), help="inline (default), process, ray")
    train.add_argument("--seed", type=int)
    train.add_argument("--logdir", metavar="DIR", help="write the run directory (params, results)")
    train.add_argument("--checkpoint-freq", type=positive_int, metavar="N", help="every N iters")
    train.add_argument("--checkpoint-at-end", action="store_true", help="save after the last")
    train.add_argument("--restore", metavar="PATH", help="continue from this checkpoint")
    train.add_argument(
        "--resume", action="store_true",
        help="continue the run in --logdir from its newest checkpoint (a new run if it has none)",
    )  # fmt: skip
    train.add_argument(
        "--record", metavar="FILE",
        help="record every event to FILE, as msgpack (FILE.msgpack) or JSON lines (FILE.jsonl)",
    )  # fmt: skip
    train.add_argument(
        "--format", choices=sorted(set(RECORDING_FORMATS.values())),
        help="the recording's format, whatever FILE's extension",
    )  # fmt: skip
    train.add_argument("--debug", action="store_true", help="show tracebacks")
    train.set_defaults(run=run_train)


def run_train(args: argparse.Namespace) -> int:
    """Train as ``args`` say; print progress and a table; return the exit status."""
    if args.resume:
        args.restore = _newest_checkpoint(args)
    config, callbacks = _build_config(args)
    if config.logdir and not args.restore:
        found = run_traces(Path(config.logdir))
        if found is not None:  # refused before anything is built (the writers would, later)
            raise UsageError(
                f"{found.describe()}; pass --resume to go on from its newest checkpoint, or "
                f"give a new --logdir"
            )
    stop = StopConditions(args.stop, args.iterations)
    if (args.checkpoint_freq or args.checkpoint_at_end) and not config.logdir:
        raise UsageError("--checkpoint-freq and --checkpoint-at-end need --logdir (or logdir=)")
    names = ", ".join(getattr(cb, "__name__", type(cb).__name__) for cb in callbacks) or "none"
    out = sys.stdout
    until = " or ".join(f"{key} >= {target:g}" for key, target in stop.targets.items())
    algo_name = type(config).__name__.removesuffix("Config")
    print(f"hookbus: {algo_name} on {config.env}, until {until}, callbacks: {names}", flush=True)
    rows: list[dict[str, Any]] = []
    interrupted = False
    # With --checkpoint-at-end, a first Ctrl-C lets the iteration in progress finish, so
    # that the checkpoint holds a whole one; a second cancels at once, and nothing is saved.
    finish_first = _FinishFirst() if args.checkpoint_at_end else contextlib.nullcontext(None)
    checkpoint: Path | None = None
    try:
        with config.build() as algo, finish_first as deferred:
            if args.restore:
                algo.restore_from_path(args.restore)
                print(f"restored {args.restore} at iteration {algo.training_iteration}", flush=True)
            start, first = time.perf_counter(), algo.training_iteration
            try:
                while True:
                    rows.append(algo.train())
                    iteration = rows[-1]["training_iteration"]
                    per_iteration = (time.perf_counter() - start) / (iteration - first)
                    progress(out, rows[-1], *stop.progress(rows[-1]), per_iteration)
                    saved = bool(args.checkpoint_freq and iteration % args.checkpoint_freq == 0)
                    if saved:
                        _save(algo, config.logdir, iteration)
                    reached = stop.reached(rows[-1])
                    reached += _honour_control(algo, config.logdir, rows[-1], iteration, saved)
                    if reached or (deferred is not None and deferred.requested):
                        interrupted = not reached
                        break
            except KeyboardInterrupt:  # Ctrl-C: stop the Algorithm, then show what was done
                interrupted = True
            whole = deferred is not None and not deferred.cancelled
            if args.checkpoint_at_end and rows and (not interrupted or whole):
                if not (args.checkpoint_freq and iteration % args.checkpoint_freq == 0):
                    checkpoint = _save(algo, config.logdir, iteration)
                else:
                    checkpoint = _checkpoint_dir(config.logdir, iteration)
    except KeyboardInterrupt:  # a second Ctrl-C while the checkpoint is saved or the run stops
        interrupted = True
        if checkpoint is None and rows and args.checkpoint_at_end:
            # A save is all or nothing (a hidden folder renamed into place): if the rename
            # happened before the interruption, the checkpoint is whole.
            done_dir = _checkpoint_dir(config.logdir, rows[-1]["training_iteration"])
            checkpoint = done_dir if done_dir.is_dir() else None
    if out.isatty():
        print(file=out)
    print(table(rows), file=out)
    if interrupted:
        done = f"{len(rows)} iteration{'' if len(rows) == 1 else 's'}"
        if not args.checkpoint_at_end:
            saving = ""
        elif checkpoint is not None:
            saving = f"; saved iteration {iteration} to {checkpoint}"
        else:
            saving = "; no checkpoint saved (" + (
                "stopped at once by a second Ctrl-C)" if rows else "no iteration finished)"
            )
        print(f"hookbus train: interrupted after {done}{saving}", file=sys.stderr)
        return 130
    print(f"stopped: {', '.join(reached)}", file=out)
    return 0


class _FinishFirst:
    """Turn a first SIGINT into a request to stop after the iteration in progress.

    A second SIGINT raises KeyboardInterrupt as usual (and ``cancelled`` tells). Only the
    main thread can set signal handlers; elsewhere this does nothing.
    """

    def __init__(self) -> None:
        self.requested = False
        self.cancelled = False
        self._previous: Any = None

    def __enter__(self) -> _FinishFirst:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._on_sigint)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)

    def _on_sigint(self, signum: int, frame: Any) -> None:
        if self.requested:
            self.cancelled = True
            raise KeyboardInterrupt
        self.requested = True
        newline = "\n" if sys.stdout.isatty() else ""  # after the progress line's \r
        print(
            f"{newline}hookbus train: Ctrl-C: finishing this iteration, then saving a "
            "checkpoint (Ctrl-C again to stop at once, saving nothing)",
            file=sys.stderr,
            flush=True,
        )


def _build_config(args: argparse.Namespace) -> tuple[Any, list[Any]]:
    data = read_config_file(args.config) if args.config else {}
    file_algo = data.pop("algo", None)
    if args.algo and file_algo and str(file_algo).upper() != args.algo:
        raise UsageError(f"--algo {args.algo} differs from algo={file_algo!r} in {args.config}")
    # A checkpoint to restore brings its algorithm and data settings; options given win.
    stored_algo, stored = read_stored_config(args.restore) if args.restore else (None, None)
    algo = str(args.algo or file_algo or stored_algo or "PPO").upper()
    if stored_algo is not None and algo != stored_algo.upper():
        raise UsageError(f"--restore {args.restore!r} holds a {stored_algo} algorithm, not {algo}")
    config = config_class(algo)()
    held: dict[str, Any] = {}  # the checkpoint's settings naming code: the caller must give them
    if stored is not None:
        config.update_from_dict(stored.settings, where=f"--restore {args.restore}")
        held = hold_back_code(config)
    config.update_from_dict(data, where=args.config or "")
    for text in args.set:
        key, value = parse_override(text, "--set")
        config.update_from_dict({key: value}, where=f"--set {shown(text)}")
    options = {
        "num_env_runners": args.num_env_runners,
        "num_envs_per_env_runner": args.num_envs_per_env_runner,
        "backend": args.backend,
        "seed": args.seed,
        "logdir": args.logdir,
    }
    config.update_from_dict({k: v for k, v in options.items() if v is not None})
    if args.env:
        config.environment(args.env)
    refuse_held_back(config, held, args.restore, _RESTORE_HOW)
    if config.env is None:
        raise UsageError("no env: give --env (e.g. CartPole-v1) or env in --config")
    callbacks = [load_object(spec) for spec in args.callbacks]
    if args.record:
        callbacks.insert(0, recorder(args.record, args.format))
    elif args.format:
        raise UsageError("--format applies to --record FILE, which is missing")
    config.callbacks(callbacks, plugins=args.plugin or False)
    return config, callbacks


def _newest_checkpoint(args: argparse.Namespace) -> str | None:
    """Return the checkpoint ``--resume`` goes on from: the newest in ``--logdir``, if any."""
    if args.restore:
        raise UsageError("--resume goes on from --logdir's newest checkpoint; drop --restore")
    if not args.logdir:
        raise UsageError("--resume needs --logdir, the run directory to go on with")
    if not Path(args.logdir).is_dir():
        return None  # nothing to go on from: a new run there
    saved = list_checkpoints(args.logdir)
    if saved:
        return str(saved[-1])
    found = run_traces(Path(args.logdir))
    if found is not None:
        raise UsageError(f"{found.describe()} but no checkpoint to go on from; give a new --logdir")
    return None


def _honour_control(
    algo: Algorithm, logdir: str | None, result: dict[str, Any], iteration: int, saved: bool
) -> list[str]:
    """Act on what handlers asked for in ``result["control"]``; return a stop's reason, if any.

    A checkpoint is saved if there is a logdir (once per iteration), an evaluation round
    runs now (what its on_evaluate_end handlers ask for shows in the next result), a stop
    ends the run after both.
    """
    control = result.get("control") or {}
    asked = {name: " and ".join(who) for name, who in control.get("requested_by", {}).items()}
    reason = f" ({control['reason']})" if control.get("reason") else ""
    newline = "\n" if sys.stdout.isatty() else ""  # after the progress line's \r
    if control.get("checkpoint") and not saved:
        if logdir:
            _save(algo, logdir, iteration)
        else:
            print(f"{newline}checkpoint requested by {asked['checkpoint']}: cannot save "
                  f"without --logdir", flush=True)  # fmt: skip
    if control.get("evaluate"):
        metrics = algo.evaluate()
        mean = metrics.get("env_runners", {}).get("episode_return_mean", float("nan"))
        who = asked["evaluate"]
        print(f"{newline}evaluation requested by {who}: return {mean:.2f}", flush=True)
    if control.get("stop_training"):
        return [f"stop_training requested by {asked['stop_training']}{reason}"]
    return []


def _checkpoint_dir(logdir: str, iteration: int) -> Path:
    return Path(logdir) / f"checkpoint_{iteration:06d}"


def _save(algo: Algorithm, logdir: str, iteration: int) -> Path:
    path = algo.save_to_path(_checkpoint_dir(logdir, iteration))
    newline = "\n" if sys.stdout.isatty() else ""  # after the progress line's \r
    print(f"{newline}checkpoint: {path}", flush=True)
    return path


def recorder(path: str, format: str | None) -> Recorder:
    """Open a Recorder for ``--record``, the format from ``--format`` or the extension."""
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
