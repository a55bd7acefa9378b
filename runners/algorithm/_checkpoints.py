"""Saving and restoring an Algorithm: the async cores its checkpoint methods delegate to."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from hookbus.events import CheckpointLoaded

from ._checkpoint import read_checkpoint, write_checkpoint
from ._lifecycle import Lifecycle
from ._module_files import module_files
from ._state import load_state, saved_state

if TYPE_CHECKING:
    from hookbus.kernel import Publisher

    from ._setup import Setup
    from ._state import Checkpointed

__all__ = ("CheckpointStore", "new_checkpoint_dir")


class CheckpointStore:
    """Write an Algorithm's state to a directory and load it back, all or nothing.

    Handed the Algorithm as what a checkpoint holds of it (``_state.Checkpointed``), its
    publisher (``on_checkpoint_loaded``) and its ``Setup`` (the runners get the restored
    weights).
    """

    def __init__(self, algorithm: Checkpointed, publisher: Publisher, setup: Setup) -> None:
        self._algorithm = algorithm
        self._publisher = publisher
        self._setup = setup

    async def asave(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the state into directory ``path`` (``Algorithm.asave_to_path``); None: a
        new temporary folder, as RLlib's ``save_to_path()`` without a path."""
        self._setup.require(Lifecycle.READY, "save_to_path")
        if path is None:
            path = new_checkpoint_dir(type(self._algorithm).__name__)
        directory = Path(path)
        state = saved_state(self._algorithm)
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
        added = await self._algorithm._aadd_saved_modules(state)
        try:
            load_state(self._algorithm, state, path)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self._algorithm._aremove_saved_modules(added)
            raise
        weights = self._setup.ready_learner().module.get_state()
        await self._setup.ready_group().sync_weights(weights)
        await self._publisher.publish(CheckpointLoaded, path=str(path))


def new_checkpoint_dir(algorithm_name: str) -> str:
    """Make and return a new temporary directory for ``save()`` without a directory."""
    return tempfile.mkdtemp(prefix=f"hookbus-{algorithm_name.lower()}-")
