"""Reading ``--config FILE`` (TOML, YAML or JSON) as untrusted input, within fixed bounds.

A config file is small: a few sections of settings. Whatever a file holds, reading it either
gives a table or raises one ``UsageError`` naming the file and the bound it broke, before the
work or memory it asks for is spent:

- at most ``MAX_BYTES`` (1 MiB) of UTF-8 text (other bytes: the offset of the first bad one);
- YAML: at most ``MAX_ALIASES`` alias uses (``*name``), counted on the parser's event stream
  before anything is built, so an alias bomb (each level doubling the last) never expands;
- nesting at most ``MAX_DEPTH`` deep, and at most ``MAX_VALUES`` values in all once decoded,
  aliases counted as often as they are used (a file's meaning, not its text, is bounded).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import msgspec

from ._args import UsageError, not_a_file

__all__ = (
    "MAX_ALIASES",
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_VALUES",
    "check_size",
    "read_config_file",
)

MAX_BYTES = 1 << 20
MAX_ALIASES = 100
MAX_DEPTH = 32
MAX_VALUES = 100_000
_DECODERS = {".toml": "toml", ".yaml": "yaml", ".yml": "yaml", ".json": "json"}


def read_config_file(path: str) -> dict[str, Any]:
    """Decode a TOML, YAML or JSON config file into its table of sections and settings."""
    file = Path(path)
    kind = _DECODERS.get(file.suffix.lower())
    if kind is None:
        raise UsageError(
            f"--config {path!r}: cannot tell the format from the extension; use "
            f"{', '.join(_DECODERS)}"
        )
    if file.is_dir():
        raise UsageError(f"--config {path!r} is a directory; give a config file")
    if file.exists() and not file.is_file():  # a FIFO would block the read forever
        raise UsageError(f"--config {not_a_file(path, 'a config file')}")
    text = _read_text(file, path)
    if kind == "yaml":
        _check_yaml_events(text, path)
    try:
        table = _decode(kind, text)
    except msgspec.DecodeError as exc:
        raise UsageError(f"--config {path!r} is not valid {kind.upper()}: {_line(exc)}") from exc
    except RecursionError:
        raise UsageError(f"--config {path!r} nests deeper than {MAX_DEPTH} levels") from None
    if not isinstance(table, dict):
        raise UsageError(f"--config {path!r} must hold a table of sections, got {table!r:.80}")
    check_size(table, f"--config {path!r}")
    return table


def _read_text(file: Path, path: str) -> str:
    try:
        with open(file, "rb") as stream:
            data = stream.read(MAX_BYTES + 1)  # never more, whatever the file's size
    except OSError as exc:
        raise UsageError(f"--config: cannot read {path!r}: {exc.strerror}") from exc
    if len(data) > MAX_BYTES:
        raise UsageError(f"--config {path!r} is larger than {MAX_BYTES} bytes (1 MiB)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"--config {path!r} is not UTF-8 text: byte 0x{data[exc.start]:02x} at offset "
            f"{exc.start}"
        ) from None


def _check_yaml_events(text: str, path: str) -> None:
    """Bound aliases, depth and values on the YAML parser's events: nothing is built yet.

    Each collection's values are counted as it closes, an anchored one's kept by its anchor,
    so that an alias counts what it stands for: an alias bomb is refused by its meaning.
    """
    yaml = _pyyaml()
    open_: list[list[Any]] = []  # per open collection: [its anchor, values so far]
    sizes: dict[str, int] = {}  # anchor -> values it stands for
    aliases = 0
    try:
        for event in yaml.parse(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if isinstance(event, yaml.CollectionStartEvent):
                open_.append([event.anchor, 1])
                if len(open_) > MAX_DEPTH:
                    raise UsageError(f"--config {path!r} nests deeper than {MAX_DEPTH} levels")
                continue
            if isinstance(event, yaml.CollectionEndEvent):
                anchor, values = open_.pop()
            elif isinstance(event, yaml.AliasEvent):
                aliases += 1
                if aliases > MAX_ALIASES:
                    raise UsageError(
                        f"--config {path!r} uses more than {MAX_ALIASES} YAML aliases (*name)"
                    )
                anchor, values = None, sizes.get(event.anchor, 1)
            elif isinstance(event, yaml.ScalarEvent):
                anchor, values = event.anchor, 1
            else:
                continue
            if anchor is not None:
                sizes[anchor] = values
            if open_:
                open_[-1][1] += values
                if open_[-1][1] > MAX_VALUES:
                    raise UsageError(f"--config {path!r} holds more than {MAX_VALUES} values")
    except yaml.YAMLError as exc:
        raise UsageError(f"--config {path!r} is not valid YAML: {_line(exc)}") from exc


def check_size(data: Any, what: str) -> None:
    """Walk decoded ``data`` without recursion: depth and values in all, bounded.

    ``what`` names its source in the error (``"--config 'run.toml'"``, ``"--set 'lr'"``).
    """
    stack: list[tuple[Any, int]] = [(data, 1)]
    values = 0
    while stack:
        node, depth = stack.pop()
        values += 1
        if values > MAX_VALUES:
            raise UsageError(f"{what} holds more than {MAX_VALUES} values")
        if depth > MAX_DEPTH:
            raise UsageError(f"{what} nests deeper than {MAX_DEPTH} levels")
        children = node.values() if isinstance(node, dict) else node
        if isinstance(node, dict | list):
            stack.extend((child, depth + 1) for child in children)


def _line(exc: Exception) -> str:
    """Return ``exc``'s message on one line (PyYAML's span several)."""
    return " ".join(str(exc).split())


def _decode(kind: str, text: str) -> Any:
    if kind == "toml":
        return msgspec.toml.decode(text)
    if kind == "json":
        return msgspec.json.decode(text)
    return msgspec.yaml.decode(text)


def _pyyaml() -> Any:
    try:
        # By name: PyYAML is an optional extra without type information (used as Any).
        return importlib.import_module("yaml")
    except ImportError:
        raise UsageError(
            'reading YAML config files needs PyYAML: pip install "hookbus[yaml]"'
        ) from None
