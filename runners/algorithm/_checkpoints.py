"""The Algorithm's checkpoint methods: the async core, its sync twins and RLlib's names."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, cast

import anyio

from hookbus.events import CheckpointLoaded

from ._checkpoint import read_checkpoint, write_checkpoint
from ._lifecycle import Lifecycle
from ._state import build_restored, load_state, saved_state

if TYPE_CHECKING:
    from hookbus.kernel import Publisher

    from ..config import AlgorithmConfig
    from ..fleet import EnvRunnerGroup
    from ._facade import SyncFacade
    from ._learner import AnyLearner
    from ._state import Checkpointed

__all__ = ("Checkpoints",)


class Checkpoints:
    """Save and restore an Algorithm (a base of ``Algorithm``; it uses the names below)."""

    if TYPE_CHECKING:  # what the Algorithm provides
        _lifecycle: Lifecycle
        _publisher: Publisher
        _sync: SyncFacade
        _tune_trial: bool

        @property
        def learner(self) -> AnyLearner: ...
        @property
        def env_runner_group(self) -> EnvRunnerGroup: ...
        def _require(self, lifecycle: Lifecycle, action: str) -> None: ...
        def _tune_call(self, name: str, *args: Any, **kwargs: Any) -> Any: ...
        def stop(self) -> None: ...

    def _checkpointed(self) -> Checkpointed:
        # The Algorithm this is a base of has every part a checkpoint holds.
        return cast("Checkpointed", self)

    async def asave_to_path(self, path: str | os.PathLike[str]) -> Path:
        """Write the Algorithm's state into directory ``path`` (created if needed).

        A crash at any moment leaves ``path`` absent or a complete checkpoint: a new folder
        is written beside and renamed into place, an existing one gets its file replaced
        by rename, both synced to disk; the save also removes what earlier, killed saves
        left (docs/runners.md). The file carries a SHA-256 checksum.
        """
        self._require(Lifecycle.READY, "save_to_path")
        directory = Path(path)
        state = saved_state(self._checkpointed())
        await anyio.to_thread.run_sync(write_checkpoint, directory, state)
        return directory

    async def arestore_from_path(self, path: str | os.PathLike[str]) -> None:
        """Load a state written by ``save_to_path``; publish ``on_checkpoint_loaded``.

        All or nothing: the checkpoint is verified (checksum) and checked against this
        Algorithm (sections, the learner's shapes, metrics, extra state) before anything
        changes, and a part that still fails to load rolls the others back. Any failure is
        a ConfigError naming the file; the Algorithm is then as it was.
        """
        self._require(Lifecycle.READY, "restore_from_path")
        state = await anyio.to_thread.run_sync(read_checkpoint, path, type(self).__name__)
        load_state(self._checkpointed(), state, path)
        await self.env_runner_group.sync_weights(self.learner.module.get_state())
        await self._publisher.publish(CheckpointLoaded, path=str(path))

    def save_to_path(self, path: str | os.PathLike[str]) -> Path:
        """Write a checkpoint (sync twin of ``asave_to_path()``)."""
        return self._sync.run(
            self._lifecycle, "save_to_path", "asave_to_path", self.asave_to_path, path
        )

    def restore_from_path(self, path: str | os.PathLike[str]) -> None:
        """Load a checkpoint (sync twin of ``arestore_from_path()``)."""
        self._sync.run(
            self._lifecycle,
            "restore_from_path",
            "arestore_from_path",
            self.arestore_from_path,
            path,
        )

    def save(self, checkpoint_dir: str | os.PathLike[str] | None = None, **kwargs: Any) -> Any:
        """Write a checkpoint into ``checkpoint_dir`` (a new temporary one by default).

        In a Ray Tune trial this is Tune's ``save()`` (its result, for Tune).
        """
        if self._tune_trial:
            return self._tune_call("save", checkpoint_dir, **kwargs)
        if kwargs:
            raise TypeError(f"save() takes only checkpoint_dir, got {', '.join(kwargs)}")
        if checkpoint_dir is None:
            checkpoint_dir = tempfile.mkdtemp(prefix=f"hookbus-{type(self).__name__.lower()}-")
        return self.save_to_path(checkpoint_dir)

    def restore(self, checkpoint_path: Any, **kwargs: Any) -> None:
        """Load a checkpoint (RLlib's name for ``restore_from_path()``; Tune's in a trial)."""
        if self._tune_trial:
            self._tune_call("restore", checkpoint_path, **kwargs)
            return
        if kwargs:
            raise TypeError(f"restore() takes only checkpoint_path, got {', '.join(kwargs)}")
        self.restore_from_path(checkpoint_path)

    @classmethod
    def from_checkpoint(
        cls,
        path: str | os.PathLike[str],
        config: AlgorithmConfig[Any] | None = None,
        *,
        env: Any = None,
    ) -> Self:
        """Build an Algorithm from a checkpoint and restore it: ready to train or act.

        The checkpoint keeps the config's data settings, never code; if the config held
        code (callbacks, an env creator), pass ``config`` (that config, or an equivalent).
        ``env`` sets the env alone (of the checkpoint's config, or of ``config``). A
        checkpoint is data and its stored env is resolved only if that imports nothing (a
        name given to ``register_env``, a gymnasium id); a ``module:Name`` or
        ``file.py:Name`` is refused unless ``env`` or ``config`` is given. A checkpoint
        that cannot be restored is a ConfigError; what was built is stopped.
        """
        return build_restored(cls, path, config, env)
