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
from ._modules import add_saved_modules, module_records, remove_saved_modules
from ._state import load_state, saved_state

if TYPE_CHECKING:
    from collections.abc import Callable

    from hookbus.kernel import Publisher

    from ._modules import ModuleParts
    from ._setup import Setup
    from ._state import Checkpointed

__all__ = ("CheckpointStore", "new_checkpoint_dir")


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
