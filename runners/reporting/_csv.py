"""``progress.csv``: one row per iteration, one column per flattened result key."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import Any, TextIO

import numpy as np

from ._files import RunDirWriter, atomic_write, encode_line, flatten, resumed_at

__all__ = ("PROGRESS_FILE", "CsvLogger")

PROGRESS_FILE = "progress.csv"


class CsvLogger(RunDirWriter):
    """Write each result as a row of ``logdir/progress.csv``, flushed every iteration.

    Tune's ``CSVLoggerCallback``, except that keys may come and go: columns are the
    flattened result keys (``env_runners/episode_return_mean``) in order of first
    appearance. A key that first appears at a later iteration adds a column, and earlier
    rows get an empty cell there: the file is then rewritten whole and atomically (a reader
    sees the old file or the new one). Otherwise a row is appended. An empty cell means the
    key was missing (or None); NaN is written ``nan``, booleans ``True``/``False``, lists
    and arrays as JSON text.
    """

    def _fresh(self) -> None:
        self._file: TextIO | None = None
        self._columns: list[str] = []
        self._index: dict[str, int] = {}
        self._started = False

    def write_result(self, result: dict[str, Any]) -> None:
        """Append ``result``'s row, or rewrite the file if it brings new keys."""
        if not self._started:
            iteration = resumed_at(result)
            if iteration is not None:
                self._resume(iteration)
        flat = list(flatten(result))
        new = [key for key, _ in flat if key not in self._index]
        if new or not self._started:
            self._add_columns(new)
            self._rewrite(self._row(flat))
        else:
            file = self._file
            if file is None:  # reused after close(): carry on where it stopped
                file = self._file = self._append()
            file.write(self._row(flat))
            file.flush()

    def _resume(self, iteration: int) -> None:
        """Keep the rows of the iterations before ``iteration`` that a file there has.

        Torn rows (a crash mid-write) and the iterations the restored run writes again are
        dropped; a file without a ``training_iteration`` column is not ours to keep.
        """
        path = self.logdir / PROGRESS_FILE
        try:
            with open(path, newline="", encoding="utf-8") as file:
                header, *rows = list(csv.reader(file)) or [[]]
        except (FileNotFoundError, UnicodeDecodeError, csv.Error):
            return
        if "training_iteration" not in header:
            return
        column = header.index("training_iteration")
        kept = [row for row in rows if len(row) == len(header) and _before(row[column], iteration)]
        self._add_columns(header)
        atomic_write(path, _csv_text([header, *kept]).encode("utf-8"))
        self._started = True

    def _add_columns(self, keys: Iterable[str]) -> None:
        for key in keys:
            self._index[key] = len(self._columns)
            self._columns.append(key)

    def _row(self, flat: list[tuple[str, Any]]) -> str:
        cells = [""] * len(self._columns)
        for key, value in flat:
            cells[self._index[key]] = _cell(value)
        return _csv_text([cells])

    def _rewrite(self, last_row: str) -> None:
        """Write the header, the earlier rows padded to the new width, and ``last_row``."""
        self.close()
        rows: list[list[str]] = [self._columns]
        if self._started:
            rows += [row + [""] * (len(self._columns) - len(row)) for row in self._earlier_rows()]
        text = _csv_text(rows) + last_row
        atomic_write(self.logdir / PROGRESS_FILE, text.encode("utf-8"))
        self._started = True
        self._file = self._append()

    def _earlier_rows(self) -> list[list[str]]:
        # Read back from the file rather than kept in memory: a long run's rows would grow
        # without bound, and new keys are rare (mostly in the first iterations).
        with open(self.logdir / PROGRESS_FILE, newline="", encoding="utf-8") as file:
            rows = list(csv.reader(file))
        return rows[1:]

    def _append(self) -> TextIO:
        return open(self.logdir / PROGRESS_FILE, "a", newline="", encoding="utf-8")

    def close(self) -> None:
        """Close ``progress.csv`` (idempotent)."""
        if self._file is not None:
            self._file.close()
            self._file = None


def _csv_text(rows: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def _cell(value: object) -> str:
    """Return a result value as a CSV cell that reads back as the same number or text."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int | float):
        return repr(value)  # round-trips floats exactly; float() reads "nan" and "inf" back
    return encode_line(value)[:-1].decode("utf-8")  # lists, arrays: JSON text


def _before(cell: str, iteration: int) -> bool:
    try:
        return int(cell) < iteration
    except ValueError:
        return False
