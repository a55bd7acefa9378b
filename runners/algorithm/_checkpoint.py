"""Checkpoint files: one MessagePack file per checkpoint directory, written atomically.

Version 2 (the one written) is a MessagePack map ``{"version": 2, "sha256": digest, "body":
bytes}`` whose body is the MessagePack of the state and whose digest is the body's SHA-256:
any flipped bit, truncation or garbage is refused before the state is even decoded.
Version 1 files (the state map itself, ``"version": 1`` among its keys, no digest) are
still read, so checkpoints saved before version 2 keep loading; they are only checked for
structure. One flipped bit cannot make a version-2 file pass as version 1: 2 and 1 differ in
two bits, and a file with a digest or a body is never read as version 1.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from hookbus.events import codec
from hookbus.kernel import ConfigError

from .._regular_files import describe_kind, read_regular_file, show_bytes
from ._folders import list_checkpoints as _list_checkpoints, write_folder

__all__ = (
    "CHECKPOINT_FILE",
    "CHECKPOINT_VERSION",
    "MAX_CHECKPOINT_BYTES",
    "LoadsState",
    "SavesState",
    "callback_states",
    "decode_checkpoint",
    "encode_checkpoint",
    "list_checkpoints",
    "pair_callback_states",
    "read_checkpoint",
    "write_checkpoint",
)

# A callback's state is optional (SPEC.md: a Callback *may* implement them); any object with
# hook methods is a callback, so each method is asked for by Protocol.


@runtime_checkable
class SavesState(Protocol):
    """A callback whose state checkpoints keep."""

    def get_state(self) -> object:
        """Return the callback's state (plain data)."""
        ...


@runtime_checkable
class LoadsState(Protocol):
    """A callback that a restore gives its saved state back to."""

    def set_state(self, state: Any, /) -> None:
        """Load what ``get_state()`` returned."""
        ...


CHECKPOINT_FILE = "algorithm_state.msgpack"
CHECKPOINT_VERSION = 2
MAX_CHECKPOINT_BYTES = 2**30
"""The most a checkpoint's file (and each module's, ``_module_files``) may hold: 1 GiB.

A save writes no larger file and a read refuses one, by its size before reading it (a
sparse file of gigabytes, a link to ``/dev/zero``: ``_regular_files``). The largest
module the bounds of ``config/_network_bound.py`` allow, in float64 with its Adam
moments, takes less than half of it.
"""
# The sections of a state and their types (training_iteration is also checked to be >= 0).
SECTIONS: dict[str, type | tuple[type, ...]] = {
    "algorithm": str,
    "training_iteration": int,
    "learner": dict,
    "metrics": dict,
    "callbacks": list,
    "extra": dict,
    "config": dict,
}
OPTIONAL_SECTIONS: dict[str, type] = {"modules": dict}
"""Sections a checkpoint may lack: ``modules``, how to rebuild modules added while
training (``_modules.module_records``)."""


def encode_checkpoint(state: dict[str, Any]) -> bytes:
    """Return the bytes of a version-2 checkpoint file holding ``state``."""
    body = codec.encode_msgpack(state)
    digest = hashlib.sha256(body).digest()
    return codec.encode_msgpack({"version": CHECKPOINT_VERSION, "sha256": digest, "body": body})


def write_checkpoint(
    directory: Path, state: dict[str, Any], extra: Mapping[str, bytes] | None = None
) -> None:
    """Write ``state`` into folder ``directory``: a complete checkpoint, or none at all.

    ``extra``: more files by relative path, the modules' own (``_module_files``).

    A new folder is written beside and renamed into place, an existing one gets its file
    replaced by rename, all synced to disk (``_folders``); what earlier saves left when
    they were killed (a crash, a kill -9) is removed: it is never a checkpoint.
    """
    data = encode_checkpoint(state)
    for name, content in {CHECKPOINT_FILE: data, **(extra or {})}.items():
        if len(content) > MAX_CHECKPOINT_BYTES:
            # A save writes only what a restore reads back: refused before anything is written.
            raise ConfigError(
                f"cannot save a checkpoint into {str(directory)!r}: its {name} would hold "
                f"{show_bytes(len(content))}, more than the {show_bytes(MAX_CHECKPOINT_BYTES)} "
                f"a checkpoint file may hold (MAX_CHECKPOINT_BYTES); keep less state "
                f"(a smaller network, store_buffer_in_checkpoints=False, smaller callback states)"
            )
    write_folder(directory, CHECKPOINT_FILE, data, extra)


def list_checkpoints(logdir: str | os.PathLike[str]) -> list[Path]:
    """Return the complete checkpoints (``checkpoint_<N>`` folders) in ``logdir``, oldest first.

    The temporary folders of saves in progress or killed are never listed, nor folders
    without a checkpoint file; the newest complete checkpoint is the last.
    """
    return _list_checkpoints(logdir, CHECKPOINT_FILE)


def read_checkpoint(path: str | os.PathLike[str], algorithm: str | None = None) -> dict[str, Any]:
    """Read the checkpoint in directory ``path``, written for an ``algorithm`` Algorithm (any).

    Returns the state with its sections checked (present, of the right types). Raises
    ConfigError naming the file for a missing, unreadable, corrupt, foreign or other
    algorithm's checkpoint, and for a file that is not a regular one or holds more than
    ``MAX_CHECKPOINT_BYTES``, before reading it.
    """
    if os.path.lexists(path) and not os.path.isdir(path):
        raise ConfigError(
            f"no checkpoint at {str(path)!r}: it is {describe_kind(path)}; a checkpoint is "
            f"a directory holding {CHECKPOINT_FILE}"
        )
    file = Path(path) / CHECKPOINT_FILE
    try:
        data = read_regular_file(
            file, limit=MAX_CHECKPOINT_BYTES, bound="MAX_CHECKPOINT_BYTES", what="checkpoint file"
        )
    except FileNotFoundError:
        raise ConfigError(f"no checkpoint at {str(path)!r}: {file.name} is missing") from None
    state = decode_checkpoint(data, file)
    if algorithm is not None and state["algorithm"] != algorithm:
        raise ConfigError(
            f"checkpoint {str(file)!r} holds a {state['algorithm']} algorithm, not {algorithm}"
        )
    return state


def decode_checkpoint(data: bytes, file: Path) -> dict[str, Any]:
    """Return the state in checkpoint bytes ``data``; ConfigError naming ``file`` if bad."""
    document = _decode(data, file, "")
    version = document.get("version") if isinstance(document, dict) else None
    if type(version) is int and version == 1 and not {"sha256", "body"} & document.keys():
        # Early version-1 files predate the extra state and the config record.
        state = {"extra": {}, "config": {}, **document}
        del state["version"]
    elif type(version) is int and version == CHECKPOINT_VERSION:
        state = _decode(_checked_body(document, file), file, " body")
    else:
        raise ConfigError(
            f"{str(file)!r} is not a hookbus checkpoint: expected a map with version "
            f"{CHECKPOINT_VERSION} (or 1), got {_describe(document)}"
        )
    _check_sections(state, file)
    return state


def _decode(data: bytes, file: Path, part: str) -> Any:
    try:
        return codec.decode_msgpack(data)
    except Exception as exc:  # any failure to decode bytes from a file: CodecError and kin
        raise ConfigError(f"{str(file)!r} is not a readable checkpoint{part}: {exc}") from exc


def _checked_body(document: dict[str, Any], file: Path) -> bytes:
    """Return the envelope's body once its digest matches; ConfigError otherwise."""
    if document.keys() != {"version", "sha256", "body"}:
        raise ConfigError(
            f"{str(file)!r} is a damaged checkpoint: its envelope has keys "
            f"{sorted(map(str, document))!r}, expected ['body', 'sha256', 'version']"
        )
    body, digest = document["body"], document["sha256"]
    if not isinstance(body, bytes) or not isinstance(digest, bytes):
        raise ConfigError(f"{str(file)!r} is a damaged checkpoint: body or digest not bytes")
    if hashlib.sha256(body).digest() != digest:
        raise ConfigError(
            f"{str(file)!r} is a damaged checkpoint: its SHA-256 checksum does not match "
            f"its contents (the file changed after it was written)"
        )
    return body


def _check_sections(state: object, file: Path) -> None:
    if not isinstance(state, dict):
        raise ConfigError(f"{str(file)!r} holds {_describe(state)}, not a checkpoint state")
    missing = [name for name in SECTIONS if name not in state]
    unknown = sorted(str(n) for n in state if n not in SECTIONS and n not in OPTIONAL_SECTIONS)
    if missing or unknown:
        raise ConfigError(
            f"{str(file)!r} does not hold the sections of a checkpoint: missing {missing!r}, "
            f"unknown {unknown!r}; expected {list(SECTIONS)!r}"
        )
    optional = {name: kind for name, kind in OPTIONAL_SECTIONS.items() if name in state}
    for name, kind in {**SECTIONS, **optional}.items():
        value = state[name]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ConfigError(
                f"{str(file)!r} has a bad {name!r} section: expected {_kind_name(kind)}, "
                f"got {_describe(value)}"
            )
    if state["training_iteration"] < 0:
        raise ConfigError(
            f"{str(file)!r} has training_iteration {state['training_iteration']!r}, "
            "expected an int >= 0"
        )
    for record in state["callbacks"]:
        if not (isinstance(record, dict) and record.keys() == {"class", "state"}) or not (
            isinstance(record["class"], str)
        ):
            raise ConfigError(
                f"{str(file)!r} has a bad 'callbacks' section: expected a list of "
                f"{{'class': str, 'state': ...}}, got an entry {_describe(record)}"
            )


def _kind_name(kind: type | tuple[type, ...]) -> str:
    return kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)


def _describe(value: object) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text}" if len(text) <= 60 else type(value).__name__


def callback_states(callbacks: tuple[object, ...]) -> list[dict[str, Any]]:
    """Return each callback's ``get_state()`` (None without one), tagged with its class."""
    states = []
    for cb in callbacks:
        state = cb.get_state() if isinstance(cb, SavesState) else None
        states.append({"class": type(cb).__qualname__, "state": state})
    return states


def pair_callback_states(
    callbacks: tuple[object, ...], states: list[dict[str, Any]]
) -> list[tuple[LoadsState, Any]]:
    """Pair each callback that has a ``set_state`` with the saved state of its class.

    Saved states go to callbacks of the same class in order; None states are left out.
    """
    by_class: dict[str, list[Any]] = {}
    for record in states:
        by_class.setdefault(record["class"], []).append(record["state"])
    pairs: list[tuple[LoadsState, Any]] = []
    for cb in callbacks:
        saved = by_class.get(type(cb).__qualname__)
        if saved:
            state = saved.pop(0)
            if state is not None and isinstance(cb, LoadsState):
                pairs.append((cb, state))
    return pairs
