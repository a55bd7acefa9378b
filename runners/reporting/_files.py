"""What the run-directory writers share: the base observer, JSON encoding, atomic writes.

Every writer is an observer ``Callback`` that owns one or more files in ``logdir``. Files are
opened on first use (so a writer pickled into a worker process, or one that never sees an
iteration, opens nothing) and truncated then: a writer starts its files afresh. A writer
used again after ``close()`` appends to them.
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any, ClassVar, Protocol

import msgspec
import numpy as np

from hookbus.kernel import Callback, ConfigError

__all__ = (
    "Configured",
    "Draft",
    "RunDirWriter",
    "atomic_write",
    "encode_line",
    "encode_pretty",
    "flatten",
    "resumed_at",
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
    """What ``params.json`` is written from: the Algorithm's settings (``config.to_dict()``)."""

    @property
    def config(self) -> _Settings: ...


class _Settings(Protocol):
    def to_dict(self) -> dict[str, Any]: ...


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
    Subclasses set ``_fresh()`` (their state without open files), ``write_result()`` and
    ``close()``. Writers run late in the ``on_train_result`` chain (``WRITER_PRIORITY``) and
    write the result as ``train()`` will return it, the metrics that the handlers before
    them logged included.
    """

    observer = True
    priority: ClassVar[int] = WRITER_PRIORITY
    _HOOKS: ClassVar[tuple[str, ...]] = ("on_algorithm_init", "on_train_result")

    def __init__(self, logdir: str | os.PathLike[str]) -> None:
        super().__init__()
        self.logdir = Path(logdir)
        try:
            self.logdir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(
                f"cannot make the run directory {os.fspath(logdir)!r}: {exc.strerror}"
            ) from exc
        self._fresh()

    def _fresh(self) -> None:
        """Set the state of a writer that has opened nothing yet."""

    def on_train_result(
        self, *, result: dict[str, Any], draft: Draft | None = None, **kwargs: Any
    ) -> None:
        """Write ``result``, with what handlers logged so far (replays have no draft)."""
        if draft is not None:
            draft.settle()
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
