"""Modules read back from a checkpoint's module folders (RLlib's ``RLModule.from_checkpoint``).

A save writes ``learner_group/learner/rl_module/<module_id>/module_state.msgpack`` beside
the Algorithm's file (``algorithm/_module_files.py``). Reading one builds the module from
data alone: the class a file names is looked up in a fixed table of hookbus's module
classes (PPO's, DQN's, ``RandomRLModule``), never imported; a module of a class of the
user's own is rebuilt only when that class is handed in, as ``MyModule.from_checkpoint``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from hookbus.events import codec
from hookbus.kernel import ConfigError

from .._regular_files import read_regular_file
from ..algorithm import (
    MAX_CHECKPOINT_BYTES,
    MODULE_FILE,
    MODULE_FORMAT,
    MODULES_FOLDER,
    space_from_data,
)
from ..config import DefaultModelConfig, RandomRLModule, RLModuleSpec
from ._multi_module import MultiAgentModule
from .dqn._learner import DQNModule
from .ppo._module import PPOModule

__all__ = ("load_module_checkpoint",)

_ALGORITHM_FILE = "algorithm_state.msgpack"


class _Record(msgspec.Struct, forbid_unknown_fields=False):
    """A module file's fields (``_module_files._record`` writes them)."""

    format: str
    module_id: str
    module_class: str
    observation_space: dict[str, Any] | None
    action_space: dict[str, Any] | None
    inference_only: bool
    model_config: dict[str, Any] | None
    state: dict[str, Any]


def _name(cls: type[Any]) -> str:
    """The name a module file gives hookbus's class ``cls``: its public one (what a save
    writes, ``_module_files``)."""
    return f"hookbus.runners.{cls.__qualname__}"


def _dtype(state: dict[str, Any]) -> Any:
    arrays = [v for v in state.values() if isinstance(v, np.ndarray)]
    return arrays[0].dtype.type if arrays else np.float32


def _network(cls: type[Any], flag: str, default: bool) -> Callable[[_Record, Any], Any]:
    """Return the builder of module class ``cls`` (PPO's or DQN's: an MLP of the file's
    ``fcnet_hiddens`` and ``fcnet_activation``, and one boolean setting ``flag``)."""

    def build(record: _Record, spaces: tuple[Any, Any]) -> Any:
        settings = record.model_config or {}
        # Checked as a config's are (each layer's width, their count, the weights between
        # them); the module then checks its whole size on these spaces: a file of a few
        # bytes asking for terabytes is refused before any weight is allocated.
        model = DefaultModelConfig(
            fcnet_hiddens=settings.get("fcnet_hiddens", (64, 64)),
            fcnet_activation=settings.get("fcnet_activation", "tanh"),
        )
        return cls(
            *spaces,
            model_hiddens=model.fcnet_hiddens,
            model_activation=model.fcnet_activation,
            dtype=_dtype(record.state),
            **{flag: bool(settings.get(flag, default))},
        )

    return build


def _random(record: _Record, spaces: tuple[Any, Any]) -> Any:
    return RandomRLModule(
        *spaces, inference_only=record.inference_only, model_config=record.model_config
    )


def _builders() -> dict[str, Callable[[_Record, tuple[Any, Any]], Any]]:
    """hookbus's module classes by the name a module file gives them (their public name,
    ``hookbus.runners.PPOModule``, which they report from their definition on): the only
    classes a file builds by itself."""
    builders: dict[str, Callable[[_Record, tuple[Any, Any]], Any]] = {}
    for cls, builder in (
        (PPOModule, _network(PPOModule, "vf_share_layers", False)),
        (DQNModule, _network(DQNModule, "dueling", True)),
        (RandomRLModule, _random),
    ):
        builders[_name(cls)] = builder
    return builders


def load_module_checkpoint(path: str | os.PathLike[str], module_class: type[Any] | None) -> Any:
    """Return the module saved in folder ``path``, or a ``MultiAgentModule`` of those in its
    sub-folders (``.../rl_module``). ``module_class``: the user's class that a module file
    of a class not hookbus's is rebuilt with (None: only hookbus's classes); a module of
    one of hookbus's classes is rebuilt as that class whatever is given, as RLlib's
    ``from_checkpoint`` builds the class the checkpoint holds.

    ConfigError naming the path for a folder holding no module, an Algorithm's checkpoint
    folder (naming where its modules are), a corrupt or foreign file, or a module of a
    class of the user's own without that class.
    """
    folder = Path(path)
    # lexists, not is_file: a module file that is a link to a device or a FIFO is named
    # as such by the bounded read, not taken for a folder without one.
    if os.path.lexists(folder / MODULE_FILE):
        return _load_one(folder / MODULE_FILE, module_class)
    if folder.is_dir():
        found = sorted(
            sub for sub in folder.iterdir() if sub.is_dir() and os.path.lexists(sub / MODULE_FILE)
        )
        if found:
            return MultiAgentModule(
                {sub.name: _load_one(sub / MODULE_FILE, module_class) for sub in found}
            )
    if (folder / _ALGORITHM_FILE).is_file():
        modules = folder / MODULES_FOLDER
        ids = sorted(s.name for s in modules.iterdir()) if modules.is_dir() else []
        listed = ", ".join(ids) or "none: an older hookbus saved it; restore and save again"
        raise ConfigError(
            f"{str(folder)!r} is an Algorithm's checkpoint: its modules are in "
            f"{str(modules)!r} (module ids: {listed}); pass one of their folders, or that "
            f"folder for all of them, or use Algorithm.from_checkpoint"
        )
    raise ConfigError(
        f"no module checkpoint at {str(folder)!r}: a module's folder holds {MODULE_FILE}, "
        f"a MultiRLModule's holds module folders (a checkpoint's {MODULES_FOLDER})"
    )


def _load_one(file: Path, module_class: type[Any] | None) -> Any:
    try:
        data = read_regular_file(
            file, limit=MAX_CHECKPOINT_BYTES, bound="MAX_CHECKPOINT_BYTES", what="module file"
        )
    except FileNotFoundError:  # removed since it was listed
        raise ConfigError(f"module file {str(file)!r} is missing") from None
    try:
        record = codec.decode_msgpack(data, type=_Record)
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError) as exc:
        raise ConfigError(f"{str(file)!r} is not a module checkpoint hookbus reads: {exc}") from exc
    if record.format != MODULE_FORMAT:
        raise ConfigError(
            f"{str(file)!r} is a module file of format {record.format!r}; this hookbus "
            f"reads {MODULE_FORMAT!r}"
        )
    try:
        spaces = (
            None if record.observation_space is None else space_from_data(record.observation_space),
            None if record.action_space is None else space_from_data(record.action_space),
        )
    except ValueError as exc:
        raise ConfigError(f"{str(file)!r} has a space hookbus cannot rebuild: {exc}") from exc
    module = _build(file, record, spaces, module_class)
    try:
        module.set_state(record.state)
    except (KeyError, ValueError, TypeError) as exc:
        raise ConfigError(
            f"cannot load the weights of {str(file)!r} into {type(module).__name__}: {exc}"
        ) from exc
    return module


def _build(
    file: Path, record: _Record, spaces: tuple[Any, Any], module_class: type[Any] | None
) -> Any:
    builders = _builders()
    if record.module_class not in builders and module_class is not None:
        spec = RLModuleSpec(
            module_class=module_class,
            observation_space=spaces[0],
            action_space=spaces[1],
            inference_only=record.inference_only,
            model_config=record.model_config,
        )
        return spec.build()
    builder = builders.get(record.module_class)
    if builder is None:
        raise ConfigError(
            f"module {record.module_id!r} in {str(file)!r} is of class "
            f"{record.module_class!r}, not one of hookbus's, and a file never names code "
            f"that gets imported: load it with that class, <YourModule>.from_checkpoint(path)"
        )
    if None in spaces and builder is not _random:
        raise ConfigError(
            f"{str(file)!r} keeps no observation or action space for module "
            f"{record.module_id!r} (a kind of space hookbus does not write as data)"
        )
    try:
        return builder(record, spaces)
    except ConfigError as exc:
        raise ConfigError(
            f"{str(file)!r} asks for a module hookbus does not build: {exc}"
        ) from None
