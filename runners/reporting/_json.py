"""``params.json`` and ``result.jsonl``: the run's settings, and one JSON object per iteration."""

from __future__ import annotations

from typing import Any, BinaryIO

from ._files import RunDirWriter, atomic_write, encode_line, encode_pretty

__all__ = ("PARAMS_FILE", "RESULT_FILE", "JsonLogger")

PARAMS_FILE = "params.json"
RESULT_FILE = "result.jsonl"


class JsonLogger(RunDirWriter):
    """Write the config to ``logdir/params.json`` and each result to ``logdir/result.jsonl``.

    Tune's ``JsonLoggerCallback``. ``params.json`` is ``algorithm.config.to_dict()`` (the
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

    def on_algorithm_init(self, *, algorithm: Any = None, **kwargs: Any) -> None:
        """Write ``params.json`` (atomically: a reader never sees half of it)."""
        if algorithm is None:  # a replayed stream has no Algorithm to describe
            return
        atomic_write(self.logdir / PARAMS_FILE, encode_pretty(algorithm.config.to_dict()))

    def write_result(self, result: dict[str, Any]) -> None:
        """Append ``result`` as one line of ``result.jsonl`` and flush it."""
        line = encode_line(result)
        file = self._file
        if file is None:
            # The first open starts the file afresh; a reopen after close() appends.
            path = self.logdir / RESULT_FILE
            file = self._file = open(path, "ab") if self._started else open(path, "wb")
            self._started = True
        file.write(line)
        file.flush()

    def close(self) -> None:
        """Close ``result.jsonl`` (idempotent)."""
        if self._file is not None:
            self._file.close()
            self._file = None
