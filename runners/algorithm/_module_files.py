"""A checkpoint's modules laid out as RLlib lays them out, each readable without the rest.

RLlib's checkpoint is a tree of components; its modules sit in
``learner_group/learner/rl_module/<module_id>/``, and ``RLModule.from_checkpoint`` takes
such a folder (or ``rl_module/`` itself, for all of them) to run a trained policy without
its Algorithm, env runners or Ray (RLlib's checkpointing and getting-started pages do).
hookbus's checkpoint is its one file, ``algorithm_state.msgpack``; beside it a save writes
the same tree with one file per module, ``module_state.msgpack``: the module's class name,
spaces, settings and weights, as plain data (``events.codec``). The Algorithm restores
from its own file only; these are an export, so a module's weights are on disk twice.

Reading one (``RLModule.from_checkpoint``, in ``algorithms/_module_loading.py``) builds
hookbus's own module classes from that data and never imports what a file names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from hookbus.events import codec

from ..config import DEFAULT_MODULE_ID
from ._space_data import space_to_data

__all__ = (
    "MODULES_FOLDER",
    "MODULE_FILE",
    "MODULE_FORMAT",
    "module_files",
)

MODULES_FOLDER = "learner_group/learner/rl_module"
MODULE_FILE = "module_state.msgpack"
MODULE_FORMAT = "hookbus-rl-module/1"
"""What a module file says it is (``format``): the layout version of its fields."""


def module_files(module: Any, multi_agent: bool) -> dict[str, bytes]:
    """Return the files of ``module``'s folders (paths relative to the checkpoint).

    ``module`` is the learner's: one module (its id ``default_policy``) or, multi-agent, a
    mapping of module ids to modules.
    """
    modules: Mapping[str, Any] = module if multi_agent else {DEFAULT_MODULE_ID: module}
    return {
        f"{MODULES_FOLDER}/{module_id}/{MODULE_FILE}": codec.encode_msgpack(_record(module_id, one))
        for module_id, one in modules.items()
    }


def _record(module_id: str, module: Any) -> dict[str, Any]:
    return {
        "format": MODULE_FORMAT,
        "module_id": module_id,
        "module_class": _class_name(type(module)),
        "observation_space": space_to_data(getattr(module, "observation_space", None)),
        "action_space": space_to_data(getattr(module, "action_space", None)),
        "inference_only": bool(getattr(module, "inference_only", False)),
        "model_config": _as_data(getattr(module, "model_config", None)),
        "state": module.get_state(),
    }


def _class_name(cls: type) -> str:
    """Name ``cls`` as a module file does: by the module it reports, which for hookbus's own
    module classes is their public one from the start (``hookbus.runners.PPOModule``: they
    publish themselves where they are defined), for any other class where it is defined."""
    return f"{cls.__module__}.{cls.__qualname__}"


def _as_data(model_config: Any) -> dict[str, Any] | None:
    """``model_config`` if it is plain data (a module class of the user's own may keep
    anything there), else None: the file says the settings were not kept."""
    if not isinstance(model_config, Mapping):
        return None
    try:
        codec.encode_msgpack(dict(model_config))
    except (TypeError, msgspec.EncodeError):
        return None
    return dict(model_config)
