"""What a checkpoint keeps of its config: data settings only, checked before any use.

``config_record`` writes it (the config's class, its data settings by section, the names of
the settings that held code); ``read_stored_config`` (``hookbus train --restore``) and
``config_from_record`` (``Algorithm.from_checkpoint``, ``hookbus evaluate``) read it back,
checking each value as its setting declares (bounds included) before anything is built from
it.

A checkpoint is data: loading one never imports a module it names. A string env setting is
data too, and ``module:Name`` or ``path/to/file.py:Name`` would import code when resolved;
read from a checkpoint, such a value is held back (``hold_back_code``) and refused
(``refuse_held_back``) unless the caller sets that setting themselves (``env=``,
``config=``, ``--env``). A name given to ``register_env`` and an id gymnasium already has
resolve without importing anything and load as they are.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from typing import Any

import msgspec

from hookbus.kernel import ConfigError

from .._types import EnvSpec
from ..config import AlgorithmConfig
from ..envs import RegisteredEnv, env_names_code
from ._checkpoint import read_checkpoint

__all__ = (
    "FROM_CHECKPOINT",
    "StoredConfig",
    "config_from_record",
    "config_record",
    "hold_back_code",
    "read_stored_config",
    "refuse_held_back",
    "stored_config",
)

FROM_CHECKPOINT: Mapping[str, str] = {
    "env": "pass env= (or config=) to from_checkpoint() to load it",
    "evaluation_config": "pass config= to from_checkpoint() to load it",
}
"""How a caller of ``Algorithm.from_checkpoint`` gives each setting ``hold_back_code`` holds."""


class StoredConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What a checkpoint keeps of its config: the class, its data settings, what held code.

    Settings whose values are data (numbers, strings, lists, dicts of those) are kept by
    section; code (callbacks, env creators, functions) is never written to a checkpoint,
    only the names of the settings that held it, so that loading a file never names code
    to run.
    """

    config_class: str = msgspec.field(name="class")
    settings: dict[str, dict[str, Any]]
    code: list[str]


def config_record(config: AlgorithmConfig[Any]) -> dict[str, Any]:
    """Describe ``config`` as plain data (a ``StoredConfig``), for ``from_checkpoint``."""
    settings: dict[str, dict[str, Any]] = {}
    code: list[str] = []
    for section, values in config.to_dict_by_section().items():
        if section not in config.sections:  # "callbacks": code, named below
            continue
        # A registered env is kept by its name: loading finds it where it is registered.
        values = {k: v.name if isinstance(v, RegisteredEnv) else v for k, v in values.items()}
        kept = {name: value for name, value in values.items() if _is_data(value)}
        code += [name for name in values if name not in kept]
        settings[section] = kept
    if config.callbacks_class or config.callbacks_per_hook:
        code.append("callbacks")
    record: dict[str, Any] = msgspec.to_builtins(
        StoredConfig(type(config).__name__, settings, code)
    )
    return record


def stored_config(record: object, path: str | os.PathLike[str]) -> StoredConfig:
    """Decode a checkpoint's config record; ConfigError naming the checkpoint if it is bad."""
    try:
        stored = msgspec.convert(record, StoredConfig)
    except msgspec.ValidationError:
        raise ConfigError(
            f"checkpoint {str(path)!r} holds no readable config; pass config=..."
        ) from None
    named = [name for name in stored.settings if name.startswith("callbacks")]
    if named:
        # update_from_dict() takes "callbacks" keys (callbacks(...)'s keywords, or the flat
        # form's callbacks_*); config_record never writes one, and plugins they named (or
        # plugins=True) would then be loaded.
        raise ConfigError(
            f"checkpoint {str(path)!r} holds a bad config: a {named[0]!r} section, which "
            f"checkpoints never hold (callbacks and plugins are code); pass config=..."
        )
    return stored


def read_stored_config(path: str | os.PathLike[str]) -> tuple[str, StoredConfig]:
    """Return the Algorithm's name and the config that checkpoint ``path`` keeps.

    Each stored setting is checked as its declaration says (bounds included) before it is
    returned: a checkpoint never gets a value past ``validate()`` by being loaded.
    """
    state = read_checkpoint(path)
    stored = stored_config(state["config"], path)
    _check_values(stored, path)
    return state["algorithm"], stored


def _is_data(value: object) -> bool:
    if value is None or isinstance(value, bool | int | float | str):
        return True
    if isinstance(value, list | tuple):
        return all(_is_data(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_data(v) for k, v in value.items())
    return False


def config_from_record(
    record: object,
    path: str | os.PathLike[str],
    *,
    env: EnvSpec | None = None,
    how: Mapping[str, str] = FROM_CHECKPOINT,
) -> AlgorithmConfig[Any]:
    """Rebuild the config a checkpoint describes (``config_record``), ``env`` set if given.

    A stored setting whose value names code is refused unless the caller gives it:
    ConfigError naming the value and, from ``how``, the way to give it.
    """
    stored = stored_config(record, path)
    code = [name for name in stored.code if not (name == "env" and env is not None)]
    if code:
        raise ConfigError(
            f"checkpoint {str(path)!r} was saved from a config with code in "
            f"{', '.join(map(str, code))}, which checkpoints never hold; pass it: "
            f"Algorithm.from_checkpoint(path, config=...)"
        )
    config: AlgorithmConfig[Any] = _config_class(stored, path)()
    # Decoded through the sections' typed structs: a file only ever sets settings; then
    # checked whole, bounds included, before anything is built from it (a file asking for
    # a million runners or a huge network is refused here).
    where = f"checkpoint {str(path)!r} holds a bad config"
    config.update_from_dict(stored.settings, where=where)
    held = hold_back_code(config)  # before validate(), which would import what they name
    if env is not None:
        config.environment(env)
    refuse_held_back(config, held, path, how)
    try:
        config.validate()
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return config


def hold_back_code(config: AlgorithmConfig[Any]) -> dict[str, Any]:
    """Unset the settings of ``config`` (just set from a checkpoint) whose values name code.

    Those are the env (a string that ``env_names_code``: ``module:Name``,
    ``file.py:Name``, gymnasium's ``module:Id``) and an ``evaluation_config`` whose env
    override is one. Nothing is imported or checked here. Returns the held values by
    setting name, for ``refuse_held_back`` once the caller's own settings are in.
    """
    held: dict[str, Any] = {}
    if env_names_code(config.env):
        held["env"] = config.env
        config.environment(env=None)
    overrides = config.evaluation_config
    if isinstance(overrides, dict) and env_names_code(overrides.get("env")):
        held["evaluation_config"] = overrides
        config.evaluation(evaluation_config=None)
    return held


def refuse_held_back(
    config: AlgorithmConfig[Any],
    held: Mapping[str, Any],
    path: str | os.PathLike[str],
    how: Mapping[str, str],
) -> None:
    """Raise ConfigError for a held-back setting that the caller did not set again.

    The message names the stored value and says how to give the setting (``how[name]``).
    """
    for name, value in held.items():
        if getattr(config, name) is not None:
            continue  # the caller gave it: theirs is used, the checkpoint's never resolved
        if name == "env":
            what = f"env {value!r}, which names code to import"
        else:
            what = f"{name} {value!r}, whose env {value['env']!r} names code to import"
        raise ConfigError(
            f"checkpoint {str(path)!r} stores {what}; a checkpoint is data, and an env it "
            f"names must be given to register_env() or be a gymnasium id: {how[name]}"
        )


def _check_values(stored: StoredConfig, path: str | os.PathLike[str]) -> None:
    """Run each stored data setting's declared check; ConfigError naming the checkpoint."""
    config_class = _config_class(stored, path)
    infos = {(i.section, i.name): i for i in config_class().setting_infos()}
    for section, values in stored.settings.items():
        for name, value in values.items():
            info = infos.get((section, name))
            # Unknown names are update_from_dict's to refuse; code settings (the env among
            # them) are checked when the config is built, with what the caller adds.
            if info is None or info.check is None or info.holds_code:
                continue
            try:
                info.check(name, value)
            except ConfigError as exc:
                raise ConfigError(f"checkpoint {str(path)!r} holds a bad config: {exc}") from None


# hookbus's own config classes by name, and the packages that define them: imported when a
# checkpoint names one (``hookbus.runners`` imports its names on first use, so a command
# such as ``hookbus evaluate`` may not have them yet). A fixed table: a file only picks.
_OWN_CONFIGS = {
    "PPOConfig": "hookbus.runners.algorithms.ppo",
    "DQNConfig": "hookbus.runners.algorithms.dqn",
}


def _config_class(stored: StoredConfig, path: str | os.PathLike[str]) -> Any:
    if stored.config_class in _OWN_CONFIGS:
        importlib.import_module(_OWN_CONFIGS[stored.config_class])
    classes = {c.__name__: c for c in _subclasses(AlgorithmConfig)}
    config_class = classes.get(stored.config_class)
    if config_class is None:
        raise ConfigError(
            f"checkpoint {str(path)!r} needs config class {stored.config_class!r}; known: "
            f"{', '.join(sorted({*classes, *_OWN_CONFIGS}))}"
        )
    return config_class


def _subclasses(cls: type) -> list[type]:
    found: list[type] = []
    subclasses: list[type] = cls.__subclasses__()
    for sub in subclasses:
        found += [sub, *_subclasses(sub)]
    return found
