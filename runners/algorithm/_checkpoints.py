"""Saving and restoring an Algorithm: its checkpoint methods (``CheckpointMethods``, a base
of ``Algorithm`` holding no state of its own) and the async cores they delegate to
(``CheckpointStore``)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import anyio

from hookbus.events import CheckpointLoaded

from . import _tune
from ._checkpoint import read_checkpoint, write_checkpoint
from ._lifecycle import Lifecycle
from ._module_files import module_files
from ._modules import add_saved_modules, module_records, remove_saved_modules
from ._state import build_restored, load_state, saved_state

if TYPE_CHECKING:
    from hookbus.kernel import Publisher

    from .._types import EnvSpec
    from ..config import AlgorithmConfig
    from ._modules import ModuleParts
    from ._setup import Setup
    from ._state import Checkpointed
    from ._tune import TuneCheckpoint

__all__ = ("CheckpointMethods", "CheckpointStore", "new_checkpoint_dir")


class CheckpointMethods:
    """The Algorithm's checkpoint methods, RLlib's and Tune's names (a base of ``Algorithm``;
    no state of its own): each delegates to the Algorithm's ``CheckpointStore``."""

    if TYPE_CHECKING:  # what these read of the Algorithm (its _init_algorithm makes them)
        _checkpoints: CheckpointStore
        _tune_trial: bool

        def _blocking(self, name: str, twin: str, fn: Callable[..., Any], *args: object) -> Any: ...

        def stop(self) -> None: ...

    async def asave_to_path(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the Algorithm's state into directory ``path`` (created if needed); return
        it. Without ``path``, as RLlib's: a new folder in the system's temporary directory.

        A crash at any moment leaves ``path`` absent or a complete checkpoint: a new folder
        is written beside and renamed into place, an existing one gets its file replaced
        by rename, both synced to disk; the save also removes what earlier, killed saves
        left (docs/runners.md). The file carries a SHA-256 checksum.
        """
        return await self._checkpoints.asave(path)

    def save_to_path(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write a checkpoint; return its folder (sync twin of ``asave_to_path()``)."""
        saved: Path = self._blocking("save_to_path", "asave_to_path", self.asave_to_path, path)
        return saved

    async def arestore_from_path(self, path: str | os.PathLike[str] | TuneCheckpoint) -> None:
        """Load a state written by ``save_to_path``; publish ``on_checkpoint_loaded``.

        ``path`` is the checkpoint's folder or, as in RLlib, Ray Tune's ``Checkpoint``
        (``result.checkpoint``; a remote one is copied to a temporary folder first).

        All or nothing: the checkpoint is verified (checksum) and checked against this
        Algorithm (sections, the learner's shapes, metrics, extra state) before anything
        changes, and a part that still fails to load rolls the others back. Any failure is
        a ConfigError naming the file; the Algorithm is then as it was.
        """
        await self._checkpoints.arestore(await _tune.acheckpoint_folder(path, "restore_from_path"))

    def restore_from_path(self, path: str | os.PathLike[str] | TuneCheckpoint) -> None:
        """Load a checkpoint (sync twin of ``arestore_from_path()``)."""
        folder = _tune.checkpoint_folder(path, "restore_from_path")
        self._blocking("restore_from_path", "arestore_from_path", self.arestore_from_path, folder)

    def save(self, checkpoint_dir: str | os.PathLike[str] | None = None, **kwargs: Any) -> Any:
        """Write a checkpoint into ``checkpoint_dir`` (a new temporary one by default).

        In a Ray Tune trial this is Tune's ``save()`` (its result, for Tune).
        """
        if self._tune_trial:
            return _tune.tune_method(self, "save", checkpoint_dir, **kwargs)
        if kwargs:
            raise TypeError(f"save() takes only checkpoint_dir, got {', '.join(kwargs)}")
        if checkpoint_dir is None:
            checkpoint_dir = new_checkpoint_dir(type(self).__name__)
        return self.save_to_path(checkpoint_dir)

    def restore(self, checkpoint_path: Any, **kwargs: Any) -> None:
        """Load a checkpoint: a folder or Tune's ``Checkpoint`` (RLlib's name for
        ``restore_from_path()``; Tune's in a trial)."""
        if self._tune_trial:
            _tune.tune_method(self, "restore", checkpoint_path, **kwargs)
            return
        if kwargs:
            raise TypeError(f"restore() takes only checkpoint_path, got {', '.join(kwargs)}")
        self.restore_from_path(checkpoint_path)

    @classmethod
    def from_checkpoint(
        cls,
        path: str | os.PathLike[str] | TuneCheckpoint,
        config: AlgorithmConfig[Any] | None = None,
        *,
        env: EnvSpec | None = None,
    ) -> Self:
        """Build an Algorithm from a checkpoint and restore it: ready to train or act.

        The checkpoint keeps the config's data settings, never code; if the config held
        code (callbacks, an env creator), pass ``config`` (that config, or an equivalent).
        ``env`` sets the env alone (of the checkpoint's config, or of ``config``). A
        checkpoint is data and its stored env is resolved only if that imports nothing (a
        name given to ``register_env``, a gymnasium id); a ``module:Name`` or
        ``file.py:Name`` is refused unless ``env`` or ``config`` is given. A checkpoint
        that cannot be restored is a ConfigError; what was built is stopped. ``path`` may
        be Ray Tune's ``Checkpoint`` (``result.checkpoint``), as in RLlib.
        """
        return build_restored(cls, _tune.checkpoint_folder(path, "from_checkpoint"), config, env)


class CheckpointStore:
    """Write an Algorithm's state to a directory and load it back, all or nothing.

    Handed the Algorithm as what a checkpoint holds of it (``_state.Checkpointed``: public
    parts only), its publisher (``on_checkpoint_loaded``), its ``Setup`` (the runners get
    the restored weights) and ``modules``, which gives the modules' parts as they are now
    (a restore adds the modules a checkpoint holds and the Algorithm lacks).
    """

    def __init__(
        self,
        algorithm: Checkpointed,
        publisher: Publisher,
        setup: Setup,
        *,
        modules: Callable[[], ModuleParts],
    ) -> None:
        self._algorithm = algorithm
        self._publisher = publisher
        self._setup = setup
        self._modules = modules

    async def asave(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the state into directory ``path`` (``Algorithm.asave_to_path``); None: a
        new temporary folder, as RLlib's ``save_to_path()`` without a path."""
        self._setup.require(Lifecycle.READY, "save_to_path")
        if path is None:
            path = new_checkpoint_dir(type(self._algorithm).__name__)
        directory = Path(path)
        state = saved_state(self._algorithm, module_records(self._modules()))
        module = self._setup.ready_learner().module
        files = module_files(module, self._algorithm.config.is_multi_agent)
        await anyio.to_thread.run_sync(write_checkpoint, directory, state, files)
        return directory

    async def arestore(self, path: str | os.PathLike[str]) -> None:
        """Load a state ``asave`` wrote; publish ``on_checkpoint_loaded``
        (``Algorithm.arestore_from_path``)."""
        self._setup.require(Lifecycle.READY, "restore_from_path")
        name = type(self._algorithm).__name__
        state = await anyio.to_thread.run_sync(read_checkpoint, path, name)
        # Modules added while training, which a fresh Algorithm lacks, first: the learner's
        # structure check then sees them; a failed restore removes them again.
        records = state.get("modules", {})
        added = await add_saved_modules(self._modules(), records, state["learner"])
        try:
            load_state(self._algorithm, state, path)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await remove_saved_modules(self._modules(), added)
            raise
        weights = self._setup.ready_learner().module.get_state()
        await self._setup.ready_group().sync_weights(weights)
        await self._publisher.publish(CheckpointLoaded, path=str(path))


def new_checkpoint_dir(algorithm_name: str) -> str:
    """Make and return a new temporary directory for ``save()`` without a directory."""
    return tempfile.mkdtemp(prefix=f"hookbus-{algorithm_name.lower()}-")
