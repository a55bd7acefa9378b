"""Checkpoint files: one MessagePack file per checkpoint directory, written atomically."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from hookbus.events import codec
from hookbus.kernel import ConfigError

from ._config import AlgorithmConfig

__all__ = (
    "CHECKPOINT_FILE",
    "CHECKPOINT_VERSION",
    "callback_states",
    "config_from_record",
    "config_record",
    "read_checkpoint",
    "set_callback_states",
    "write_checkpoint",
)

CHECKPOINT_FILE = "algorithm_state.msgpack"
CHECKPOINT_VERSION = 1


def write_checkpoint(directory: Path, state: dict[str, Any]) -> None:
    """Write ``state`` under a temporary name, then rename it into place (never half-written)."""
    data = codec.encode_msgpack({"version": CHECKPOINT_VERSION, **state})
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".msgpack")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, directory / CHECKPOINT_FILE)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_checkpoint(path: str | os.PathLike[str], algorithm: str | None = None) -> dict[str, Any]:
    """Read the checkpoint in directory ``path``, written for an ``algorithm`` Algorithm (any).

    Raises ConfigError naming the path for a missing, unreadable, foreign or other
    algorithm's checkpoint.
    """
    file = Path(path) / CHECKPOINT_FILE
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"no checkpoint at {str(path)!r}: {file.name} is missing") from None
    try:
        state = codec.decode_msgpack(data)
    except codec.CodecError as exc:
        raise ConfigError(f"{str(file)!r} is not a readable checkpoint: {exc}") from exc
    if not isinstance(state, dict) or state.get("version") != CHECKPOINT_VERSION:
        raise ConfigError(
            f"{str(file)!r} is not a hookbus checkpoint of version {CHECKPOINT_VERSION}"
        )
    if algorithm is not None and state.get("algorithm") != algorithm:
        raise ConfigError(
            f"checkpoint {str(path)!r} holds a {state.get('algorithm')} algorithm, not {algorithm}"
        )
    return state


def callback_states(callbacks: tuple[object, ...]) -> list[dict[str, Any]]:
    """Return each callback's ``get_state()`` (None without one), tagged with its class."""
    states = []
    for cb in callbacks:
        get_state = getattr(cb, "get_state", None)
        state = get_state() if get_state is not None else None
        states.append({"class": type(cb).__qualname__, "state": state})
    return states


def set_callback_states(callbacks: tuple[object, ...], states: list[dict[str, Any]]) -> None:
    """Give each callback the saved state of the same class, in order."""
    by_class: dict[str, list[Any]] = {}
    for record in states:
        by_class.setdefault(record["class"], []).append(record["state"])
    for cb in callbacks:
        saved = by_class.get(type(cb).__qualname__)
        if saved:
            state = saved.pop(0)
            set_state = getattr(cb, "set_state", None)
            if state is not None and set_state is not None:
                set_state(state)


def config_record(config: Any) -> dict[str, Any]:
    """Describe ``config`` as plain data, for ``Algorithm.from_checkpoint``.

    Settings whose values are data (numbers, strings, lists, dicts of those) are kept;
    code (callbacks, env creators, functions) is never written to a checkpoint, only the
    names of the settings that held it, so that loading a file never names code to run.
    """
    settings: dict[str, dict[str, Any]] = {}
    code: list[str] = []
    for section, values in config.to_dict().items():
        kept = {name: value for name, value in values.items() if _is_data(value)}
        code += [name for name in values if name not in kept]
        settings[section] = kept
    if config.callbacks_class or config.callbacks_per_hook:
        code.append("callbacks")
    return {"class": type(config).__name__, "settings": settings, "code": code}


def _is_data(value: object) -> bool:
    if value is None or isinstance(value, bool | int | float | str):
        return True
    if isinstance(value, list | tuple):
        return all(_is_data(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_data(v) for k, v in value.items())
    return False


def config_from_record(record: Any, path: str | os.PathLike[str]) -> AlgorithmConfig[Any]:
    """Rebuild the config a checkpoint describes (``_checkpoint.config_record``)."""
    if not isinstance(record, dict):
        raise ConfigError(f"checkpoint {str(path)!r} holds no config; pass config=...")
    if record["code"]:
        raise ConfigError(
            f"checkpoint {str(path)!r} was saved from a config with code in "
            f"{', '.join(record['code'])}, which checkpoints never hold; pass it: "
            f"Algorithm.from_checkpoint(path, config=...)"
        )
    classes = {c.__name__: c for c in _subclasses(AlgorithmConfig)}
    config_class = classes.get(record["class"])
    if config_class is None:
        raise ConfigError(
            f"checkpoint {str(path)!r} needs config class {record['class']!r}; known: "
            f"{', '.join(sorted(classes))}"
        )
    config: AlgorithmConfig[Any] = config_class()
    for section, settings in record["settings"].items():
        getattr(config, section)(**settings)
    return config


def _subclasses(cls: type) -> list[type]:
    found: list[type] = []
    subclasses: list[type] = cls.__subclasses__()
    for sub in subclasses:
        found += [sub, *_subclasses(sub)]
    return found
