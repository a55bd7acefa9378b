"""What the run-directory writers share: the base observer, JSON encoding, atomic writes.

Every writer is an observer ``Callback`` that owns one or more files in ``logdir``. Files are
opened on first use (so a writer pickled into a worker process, or one that never sees an
iteration, opens nothing) and truncated then: a writer starts its files afresh. A writer
used again after ``close()`` appends to them.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any, ClassVar, NamedTuple, Protocol

import msgspec
import numpy as np

from hookbus.kernel import Callback, ConfigError

__all__ = (
    "Configured",
    "Draft",
    "RunDirWriter",
    "RunTraces",
    "atomic_write",
    "encode_line",
    "encode_pretty",
    "flatten",
    "resumed_at",
    "run_traces",
)


def _plain(value: object) -> object:
    """Return ``value`` as JSON data: numpy values as Python ones, anything else as its repr.

    The encoders' ``enc_hook``: msgspec calls it only for what it cannot encode itself.
    """
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return repr(value)  # callables, classes, instances: what a reader can still recognise


# One encoder for every writer (msgspec's perf advice). It writes NaN and infinities as
# null, as strict JSON requires, so any JSON reader takes every line.
_encoder = msgspec.json.Encoder(enc_hook=_plain)


def encode_line(obj: object) -> bytes:
    """Return ``obj`` as one line of compact JSON, newline included."""
    return _encoder.encode(obj) + b"\n"


def encode_pretty(obj: object) -> bytes:
    """Return ``obj`` as indented JSON, its non-finite floats as strings (``"inf"``).

    For settings, where ``inf`` means something (an unbounded clip) that null would lose.
    """
    return msgspec.json.format(_encoder.encode(_finite_or_text(obj)), indent=2) + b"\n"


def _finite_or_text(obj: object) -> object:
    if isinstance(obj, float) and not math.isfinite(obj):
        return repr(obj)  # "inf", "-inf", "nan"
    if isinstance(obj, dict):
        return {key: _finite_or_text(value) for key, value in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite_or_text(value) for value in obj]
    return obj


def flatten(tree: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Yield ``(key, value)`` for every leaf of a nested dict, keys joined with ``/``."""
    for key, value in tree.items():
        if isinstance(value, dict):
            yield from flatten(value, f"{prefix}{key}/")
        else:
            yield f"{prefix}{key}", value


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so that a reader sees the old file or the new, whole.

    A temporary file in the same directory, then ``os.replace`` (atomic on POSIX and
    Windows). No fsync: this survives a crashed process, not a power cut.
    """
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as file:
        file.write(data)
    os.replace(tmp, path)


class Configured(Protocol):
    """What ``params.json`` is written from: the Algorithm's settings by section."""

    @property
    def config(self) -> _Settings: ...


class _Settings(Protocol):
    def to_dict_by_section(self) -> dict[str, Any]: ...


class Draft(Protocol):
    """What writers use of ``on_train_result``'s ``draft`` (the Algorithm's ``ResultDraft``)."""

    def settle(self) -> dict[str, Any]:
        """Bring into the result what the handlers before this one did; return it."""
        ...


WRITER_PRIORITY = -1000
"""The writers' ``priority``: after the ``on_train_result`` handlers that add to the result."""


class RunDirWriter(Callback):
    """Base of the writers: an observer of ``on_algorithm_init`` and ``on_train_result``.

    The directory is made at construction, so that a bad ``logdir`` fails before training.
    ``exclusive`` (the default): a folder holding another run's results or checkpoints is
    refused at the first result, before anything is written, unless this run goes on from
    that one (restored from its newest checkpoint); the runs would mix otherwise. False:
    the folder is this run's alone (a Tune trial's), and an earlier attempt's files are
    started afresh.
    Subclasses set ``_fresh()`` (their state without open files), ``write_result()`` and
    ``close()``. Writers run late in the ``on_train_result`` chain (``WRITER_PRIORITY``) and
    write the result as ``train()`` will return it, the metrics that the handlers before
    them logged included.
    """

    observer = True
    priority: ClassVar[int] = WRITER_PRIORITY
    _HOOKS: ClassVar[tuple[str, ...]] = ("on_algorithm_init", "on_train_result")

    on_error: ClassVar[str | None] = "raise"  # a writer that refuses its folder stops the run

    def __init__(self, logdir: str | os.PathLike[str], *, exclusive: bool = True) -> None:
        super().__init__()
        self.logdir = Path(logdir)
        try:
            self.logdir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(
                f"cannot make the run directory {os.fspath(logdir)!r}: {exc.strerror}"
            ) from exc
        # What earlier runs left, seen before this run writes anything: every writer of a
        # run is made before its first iteration, so none mistakes another's files for a run.
        self._found: RunTraces | None = run_traces(self.logdir) if exclusive else None
        self._fresh()

    def _fresh(self) -> None:
        """Set the state of a writer that has opened nothing yet."""

    def on_train_result(
        self, *, result: dict[str, Any], draft: Draft | None = None, **kwargs: Any
    ) -> None:
        """Write ``result``, with what handlers logged so far (replays have no draft)."""
        if draft is not None:
            draft.settle()
        if self._found is not None:
            found, self._found = self._found, None
            found.check_continued_by(result)
        self.write_result(result)

    def write_result(self, result: dict[str, Any]) -> None:
        """Write one iteration's ``result``."""
        raise NotImplementedError

    def wanted_hooks(self) -> Collection[str] | None:
        """Subscribe only to the hooks a run directory needs, of those this writer overrides."""
        return self._HOOKS

    # A writer pickled into a worker process's config must not carry open files there.
    def __getstate__(self) -> dict[str, Any]:
        return {"logdir": self.logdir}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.logdir = state["logdir"]
        self._found = None  # a copy in a worker process writes nothing
        self._fresh()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({os.fspath(self.logdir)!r})"


def resumed_at(result: dict[str, Any]) -> int | None:
    """Return the iteration a run restored from a checkpoint goes on from, else None.

    A writer's first result tells: ``training_iteration`` above 1 means the Algorithm
    was restored (``--restore``, ``restore_from_path``), and the files in its directory
    keep the iterations before this one, as Tune's resumed trials keep theirs.
    """
    iteration = result.get("training_iteration")
    if isinstance(iteration, int) and iteration > 1:
        return iteration
    return None


_CHECKPOINT = re.compile(r"checkpoint_(\d+)")
_RESULT_FILES = ("result.jsonl", "progress.csv")


class RunTraces(NamedTuple):
    """What a run left in a run directory: its results, its checkpoints' numbers."""

    logdir: Path
    results: tuple[str, ...]
    """The result files holding at least one iteration."""
    checkpoints: tuple[int, ...]
    """The numbers N of its ``checkpoint_<N>`` folders, ascending."""

    def describe(self) -> str:
        """Say in a few words what is there."""
        what = [f"{' and '.join(self.results)}" if self.results else ""]
        if self.checkpoints:
            what.append(f"checkpoints up to checkpoint_{self.checkpoints[-1]:06d}")
        return f"{os.fspath(self.logdir)!r} holds another run ({', '.join(w for w in what if w)})"

    def check_continued_by(self, result: dict[str, Any]) -> None:
        """Raise ConfigError unless the run whose first result is ``result`` continues this
        one: restored from a checkpoint (``resumed_at``) with no checkpoint of the earlier
        run past that point. A fresh run would mix its results and checkpoints with these
        (``list_checkpoints(logdir)[-1]`` would be the other run's)."""
        iteration = resumed_at(result)
        if iteration is None:
            raise ConfigError(
                f"{self.describe()}; a new run would mix with it: give a new folder, or go "
                f"on from its newest checkpoint (hookbus train --resume, or "
                f"restore_from_path(list_checkpoints(logdir)[-1]) before training)"
            )
        past = [n for n in self.checkpoints if n >= iteration]
        if past:
            raise ConfigError(
                f"{self.describe()}: this run goes on from iteration {iteration - 1}, and "
                f"the checkpoints past it (checkpoint_{past[0]:06d} to "
                f"checkpoint_{past[-1]:06d}) would stay among its own; restore the newest "
                f"checkpoint, remove the later ones, or give a new folder"
            )


def run_traces(logdir: Path) -> RunTraces | None:
    """Return what a run left in ``logdir`` (results, checkpoints), or None if nothing."""
    results = tuple(name for name in _RESULT_FILES if _has_rows(logdir / name))
    checkpoints: list[int] = []
    try:
        with os.scandir(logdir) as entries:
            for entry in entries:
                match = _CHECKPOINT.fullmatch(entry.name)
                if match and entry.is_dir():
                    checkpoints.append(int(match[1]))
    except FileNotFoundError:
        pass
    if not results and not checkpoints:
        return None
    return RunTraces(logdir, results, tuple(sorted(checkpoints)))


def _has_rows(path: Path) -> bool:
    """Tell whether a result file holds an iteration (a CSV's header line alone does not)."""
    try:
        with open(path, "rb") as file:
            first = file.readline()
            return bool(file.readline()) if path.suffix == ".csv" else bool(first.strip())
    except (FileNotFoundError, IsADirectoryError):
        return False
