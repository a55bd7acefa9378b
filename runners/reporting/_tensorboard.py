"""TensorBoard event files (through tensorboardX), and the writer set of a run directory."""

from __future__ import annotations

import itertools
import math
import os
from typing import Any

import numpy as np

from hookbus.kernel import Callback, ConfigError

from ._csv import CsvLogger
from ._files import RunDirWriter, flatten, resumed_at
from ._json import JsonLogger

__all__ = ("STEP_KEY", "TensorBoardLogger", "output_callbacks")

STEP_KEY = "num_env_steps_sampled_lifetime"
"""The result key whose value is each scalar's step (RLlib's x axis)."""
_EXTRA = 'pip install "hookbus[tensorboard]"'


def _tensorboardx() -> Any:
    """Import tensorboardX, or raise ConfigError naming the extra that installs it."""
    try:
        import tensorboardX
    except ImportError as exc:
        raise ConfigError(
            f"TensorBoard output needs tensorboardX, which is missing: {_EXTRA}"
        ) from exc
    return tensorboardX


def _scalars(result: dict[str, Any]) -> list[tuple[str, float]]:
    """Return the result's numeric leaves that TensorBoard should plot, as floats.

    Booleans are flags, not measurements, and are left out; so are NaN and infinities (no
    value this iteration: TensorBoard would plot them as spikes). Lists and arrays are left
    out too. All of them stay in result.jsonl and progress.csv.
    """
    scalars = []
    for key, value in flatten(result):
        if isinstance(value, bool | np.bool_) or not isinstance(
            value, int | float | np.integer | np.floating
        ):
            continue
        number = float(value)
        if math.isfinite(number):
            scalars.append((key, number))
    return scalars


class TensorBoardLogger(RunDirWriter):
    """Write every numeric result value as a TensorBoard scalar, in ``logdir``'s event files.

    Tune's ``TBXLoggerCallback``: needs tensorboardX (``pip install "hookbus[tensorboard]"``;
    ConfigError at construction without it), not TensorFlow. The tag is the flattened
    result key (``env_runners/episode_return_mean``; custom metrics included), the step the
    result's ``num_env_steps_sampled_lifetime`` (or, when a result has none, the count of
    results so far). Flushed every iteration; ``tensorboard --logdir DIR`` shows them.
    """

    def __init__(self, logdir: str | os.PathLike[str], *, exclusive: bool = True) -> None:
        _tensorboardx()  # first: a missing extra fails before the directory is made
        super().__init__(logdir, exclusive=exclusive)

    def _fresh(self) -> None:
        self._writer: Any = None
        self._results = 0

    def write_result(self, result: dict[str, Any]) -> None:
        """Add ``result``'s numeric values as scalars at its step, and flush."""
        self._results += 1
        step = int(result.get(STEP_KEY, self._results))
        writer = self._writer
        if writer is None:
            # Opened on first use: the writer starts a thread and makes its file right away.
            # max_queue: one iteration's scalars fit without a mid-iteration write. A
            # restored run hides the steps from its first one on that an earlier run wrote
            # past its checkpoint (purge_step), so its curves do not fold back.
            purge = step if self._results == 1 and resumed_at(result) is not None else None
            writer = self._writer = _tensorboardx().SummaryWriter(
                os.fspath(self.logdir),
                max_queue=1024,
                flush_secs=3600,
                purge_step=purge,
                filename_suffix=_unique_suffix(),
            )
        for tag, value in _scalars(result):
            writer.add_scalar(tag, value, global_step=step)
        writer.flush()

    def close(self) -> None:
        """Write what is queued and close the event file (idempotent)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None


def output_callbacks(
    logdir: str | os.PathLike[str], *, tensorboard: bool | None = None, exclusive: bool = True
) -> list[Callback]:
    """Return the writers of a run directory: params.json, result.jsonl, progress.csv, TB.

    ``tensorboard``: None adds a ``TensorBoardLogger`` when tensorboardX is installed; True
    requires it (ConfigError naming the extra when it is missing); False leaves it out.
    ``exclusive`` (see ``RunDirWriter``): False when ``logdir`` is this run's alone (a Tune
    trial's folder), so that an earlier attempt's files there are started afresh.
    Pass the list to ``config.callbacks(callbacks_class=[..., *output_callbacks(dir)])``.
    """
    writers: list[Callback] = [
        JsonLogger(logdir, exclusive=exclusive),
        CsvLogger(logdir, exclusive=exclusive),
    ]
    if tensorboard is None:
        try:
            _tensorboardx()
        except ConfigError:
            return writers
        tensorboard = True
    if tensorboard:
        writers.append(TensorBoardLogger(logdir, exclusive=exclusive))
    return writers


_opened = itertools.count(1)


def _unique_suffix() -> str:
    """Return an event-file name suffix no other writer of this process uses.

    tensorboardX names a file by the second and the host only, so two writers opened in
    the same second (a run resumed at once, a quick rerun) would write one file over the
    other. The count is zero-padded: TensorBoard reads a directory's files in name order.
    """
    return f".{os.getpid()}.{next(_opened):06d}"
