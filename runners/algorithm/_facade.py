"""The Algorithm's sync facade: blocking twins of its coroutines, from any thread."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from hookbus.kernel import Bus

from .._errors import AlgorithmStateError
from .._loop import LoopThread, run_sync

__all__ = ("SyncFacade",)


class SyncFacade:
    """Give an Algorithm ``train()``, ``evaluate()``, ``stop()``, ... over its coroutines.

    They run on one event loop that lives as long as the Algorithm, in a daemon thread of
    its own (``LoopThread``); that works from plain code, from a thread that runs a loop
    of its own (a notebook) and from handlers run in worker threads. An Algorithm set up
    in the caller's loop (``async with``, or a bus of that loop) refuses them by name.
    """

    _loop: LoopThread | None
    _state: str
    _caller_loop: bool
    _owns_bus: bool
    bus: Bus
    training_iteration: int

    async def asetup(self) -> None:
        raise NotImplementedError

    async def atrain(self) -> dict[str, Any]:
        raise NotImplementedError

    async def aevaluate(self) -> dict[str, Any]:
        raise NotImplementedError

    async def asave_to_path(self, path: str | os.PathLike[str]) -> Path:
        raise NotImplementedError

    async def arestore_from_path(self, path: str | os.PathLike[str]) -> None:
        raise NotImplementedError

    async def astop(self) -> None:
        raise NotImplementedError

    def _start_own_loop(self) -> None:
        """Set up in an event loop thread of the Algorithm's own (the sync facade's)."""
        self._loop = LoopThread()
        try:
            self._loop.call(self.asetup)
        except BaseException:
            self._loop.close()
            self._loop = None
            raise

    # --- the sync facade --------------------------------------------------------------------

    def train(self) -> dict[str, Any]:
        """Run one training iteration (sync twin of ``atrain()``)."""
        result: dict[str, Any] = self._sync("train", "atrain", self.atrain)
        return result

    def evaluate(self) -> dict[str, Any]:
        """Run one evaluation round (sync twin of ``aevaluate()``)."""
        metrics: dict[str, Any] = self._sync("evaluate", "aevaluate", self.aevaluate)
        return metrics

    def save_to_path(self, path: str | os.PathLike[str]) -> Path:
        """Write a checkpoint (sync twin of ``asave_to_path()``)."""
        directory: Path = self._sync("save_to_path", "asave_to_path", self.asave_to_path, path)
        return directory

    def restore_from_path(self, path: str | os.PathLike[str]) -> None:
        """Load a checkpoint (sync twin of ``arestore_from_path()``)."""
        self._sync("restore_from_path", "arestore_from_path", self.arestore_from_path, path)

    # --- RLlib's names ---------------------------------------------------------------------

    @property
    def iteration(self) -> int:
        """The training iterations done so far (RLlib's name; ``training_iteration``)."""
        return self.training_iteration

    def save(self, checkpoint_dir: str | os.PathLike[str] | None = None) -> Path:
        """Write a checkpoint into ``checkpoint_dir`` (a new temporary one by default)."""
        if checkpoint_dir is None:
            checkpoint_dir = tempfile.mkdtemp(prefix=f"hookbus-{type(self).__name__.lower()}-")
        return self.save_to_path(checkpoint_dir)

    def restore(self, checkpoint_path: str | os.PathLike[str]) -> None:
        """Load a checkpoint (RLlib's name for ``restore_from_path()``)."""
        self.restore_from_path(checkpoint_path)

    def stop(self) -> None:
        """Stop the Algorithm and its event loop (sync twin of ``astop()``)."""
        if self._loop is None:
            if self._state == "built":  # never set up (built inside a loop, never used)
                self._state = "stopped"
                if self._owns_bus:
                    self.bus.close()
            elif self._state != "stopped":
                raise self._in_loop_error("stop", "astop")
            return
        try:
            run_sync(self._loop, "algo.astop()", self.astop)
        finally:
            self._loop.close()
            self._loop = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _sync(self, name: str, twin: str, fn: Any, *args: Any) -> Any:
        if self._loop is None:
            if self._state == "stopped":
                raise AlgorithmStateError(f"{name}() after stop(): the Algorithm is stopped")
            if self._caller_loop:
                raise self._in_loop_error(name, twin)
            # Built inside a running loop (a notebook cell) and first used from sync code:
            # set up in a loop thread of its own, as outside a loop.
            self._start_own_loop()
        return run_sync(self._loop, f"algo.{twin}()", fn, *args)

    @staticmethod
    def _in_loop_error(name: str, twin: str) -> AlgorithmStateError:
        return AlgorithmStateError(
            f"{name}() would block the event loop this Algorithm was set up in (with "
            f"`async with` or a bus of that loop); use `await algo.{twin}()` there"
        )
