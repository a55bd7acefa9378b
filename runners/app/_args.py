"""What every ``hookbus`` sub-command shares: one-line usage errors, argument types, imports."""

from __future__ import annotations

import argparse
import difflib
import importlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from .._regular_files import describe_kind

__all__ = (
    "ArgumentError",
    "Parser",
    "UsageError",
    "load_object",
    "not_a_file",
    "positive_int",
)


class UsageError(Exception):
    """Bad command-line input: one line to stderr, exit status 2."""


class ArgumentError(UsageError):
    """An option argparse refused, with the program (sub-command) it belongs to."""

    def __init__(self, prog: str, message: str) -> None:
        super().__init__(message)
        self.prog = prog


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (no usage block), raised to ``main``."""

    def error(self, message: str) -> NoReturn:
        raise ArgumentError(self.prog, message)


if TYPE_CHECKING:  # argparse's class is generic only to type checkers
    Commands = argparse._SubParsersAction[Parser]
    """What ``Parser.add_subparsers()`` returns: where each sub-command adds its parser."""


def positive_int(text: str) -> int:
    """Parse a whole number >= 1 (argparse names the option in its error)."""
    # argparse's own message for a ValueError would name this function, not the option.
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value}")
    return value


def not_a_file(path: str, expected: str) -> str:
    """Say why ``path``, which is not a regular file, cannot be read as ``expected``:
    ``no such file 'x'``, or what it is (``'x' is a directory, not a Python file``)."""
    kind = describe_kind(path)
    if kind == "missing":
        return f"no such file {path!r}"
    return f"{path!r} is {kind}, not {expected}"


def load_object(spec: str) -> Any:
    """Import ``module:attr`` or ``path/to/file.py:attr`` and return the attribute."""
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"{spec!r} is not module:Class or path/to/file.py:Class")
    if module_name.endswith(".py"):
        path = Path(module_name).resolve()
        if not path.is_file():
            raise UsageError(f"{spec!r}: {not_a_file(module_name, 'a Python file')}")
        # Import by name from the file's folder, so worker processes can import it too.
        sys.path.insert(0, str(path.parent))
        module_name = path.stem
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"{spec!r}: cannot import {module_name!r} ({exc})") from exc
    obj = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise UsageError(
                f"{spec!r}: {module_name!r} has no attribute {attr!r}{_close_names(obj, part)}"
            ) from None
    return obj


def _close_names(owner: object, name: str) -> str:
    """Say which names ``owner`` (a module or class) has that are close to ``name``; if none
    is, which classes it defines, the likely targets of ``--callbacks`` and ``--env``."""
    names = [n for n in dir(owner) if not n.startswith("_")]
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    if close:
        return f" (did you mean {' or '.join(map(repr, close))}?)"
    home = getattr(owner, "__name__", None)
    defined = [
        n
        for n in names
        if isinstance(getattr(owner, n, None), type) and getattr(owner, n).__module__ == home
    ]
    return f"; it defines {', '.join(defined)}" if defined else ""
