"""``params.json`` and ``result.jsonl``: the run's settings, and one JSON object per iteration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, BinaryIO

from ._files import (
    Configured,
    RunDirWriter,
    atomic_write,
    encode_line,
    encode_pretty,
    resumed_at,
)

__all__ = ("PARAMS_FILE", "RESULT_FILE", "JsonLogger")

PARAMS_FILE = "params.json"
RESULT_FILE = "result.jsonl"


class JsonLogger(RunDirWriter):
    """Write the config to ``logdir/params.json`` and each result to ``logdir/result.jsonl``.

    Tune's ``JsonLoggerCallback``. ``params.json`` is ``config.to_dict_by_section()`` (the
    settings by section), written whole at ``on_algorithm_init``; values that are not JSON
    data (callables, classes, callback instances) appear as their repr, infinities as
    ``"inf"``. ``result.jsonl`` gets the full nested result of every iteration as one line,
    written and flushed before ``train()`` returns, so a crash leaves every finished
    iteration readable. numpy values are written as plain numbers and lists; NaN and
    infinities as ``null`` (strict JSON: every reader takes it).
    """

    def _fresh(self) -> None:
        self._file: BinaryIO | None = None
        self._started = False

    def on_algorithm_init(self, *, algorithm: Configured | None = None, **kwargs: Any) -> None:
        """Write ``params.json`` (atomically: a reader never sees half of it)."""
        # A replayed stream has no Algorithm to describe (None, or a replay's stand-in).
        if algorithm is None or getattr(algorithm, "__hookbus_standin__", False):
            return
        settings = algorithm.config.to_dict_by_section()
        atomic_write(self.logdir / PARAMS_FILE, encode_pretty(settings))

    def write_result(self, result: dict[str, Any]) -> None:
        """Append ``result`` as one line of ``result.jsonl`` and flush it."""
        line = encode_line(result)
        file = self._file
        if file is None:
            # The first open starts the file afresh (a resumed run keeps the lines of the
            # iterations before its own); a reopen after close() appends.
            path = self.logdir / RESULT_FILE
            if not self._started:
                iteration = resumed_at(result)
                kept = _lines_before(path, iteration) if iteration is not None else []
                atomic_write(path, b"".join(kept))
                self._started = True
            file = self._file = open(path, "ab")
        file.write(line)
        file.flush()

    def close(self) -> None:
        """Close ``result.jsonl`` (idempotent)."""
        if self._file is not None:
            self._file.close()
            self._file = None


def _lines_before(path: Path, iteration: int) -> list[bytes]:
    """Return the whole lines of ``path`` whose ``training_iteration`` is below ``iteration``.

    Torn or unreadable lines (a crash mid-write) and the iterations a restored run will
    write again are left out; a missing file has none.
    """
    try:
        with open(path, "rb") as file:
            lines = file.readlines()
    except FileNotFoundError:
        return []
    kept = []
    for line in lines:
        try:
            done = json.loads(line).get("training_iteration")
        except (ValueError, AttributeError):
            continue
        if line.endswith(b"\n") and isinstance(done, int) and done < iteration:
            kept.append(line)
    return kept
