"""The rooms of ``runners/`` meet at their doors: no module imports another room's private one.

A room is a sub-package of ``runners/`` (``envs/``, ``backends/``, ``algorithm/``...). What
other rooms may use, its ``__init__`` exports; everything in its ``_modules`` may change
without notice. This walks the source with ``ast`` (importing nothing), so an import under
``if TYPE_CHECKING:`` or inside a function counts too. Strings that name a module for a
lazy import (``BACKENDS``, the algorithm registry, a worker's ``-c`` line) are not imports.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

RUNNERS = Path(__file__).resolve().parent.parent / "runners"
PACKAGE = ("hookbus", "runners")

# Imports still to move to their room's door: (importing file, imported private module).
NOT_YET_THROUGH_THE_DOOR: set[tuple[str, str]] = set()


def _imported_modules(relative: Path, source: str) -> Iterator[tuple[str, ...]]:
    """Yield, split at its dots, the full name of every module that ``source`` imports from.

    ``relative`` is the file's path under ``runners/``: relative imports start from its folder.
    """
    here = (*PACKAGE, *relative.parent.parts)
    for node in ast.walk(ast.parse(source, filename=str(relative))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield tuple(alias.name.split("."))
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else ()
            module = (*base, *(node.module.split(".") if node.module else ()))
            yield module
            # ``from ..backends import _wire`` imports a private module by its name.
            yield from ((*module, alias.name) for alias in node.names)


def _private_imports_across_rooms() -> set[tuple[str, str]]:
    """Return (file, room._module) for each import of another room's private module."""
    found = set()
    for path in RUNNERS.rglob("*.py"):
        relative = path.relative_to(RUNNERS)
        if len(relative.parts) < 2:
            continue  # runners/__init__.py and its own modules: the house, not a room
        room = relative.parts[0]
        for module in _imported_modules(relative, path.read_text()):
            if module[:2] != PACKAGE or len(module) < 4:
                continue
            other, inner = module[2], module[3]
            if other != room and inner.startswith("_"):
                found.add((relative.as_posix(), f"{other}.{inner}"))
    return found


def test_no_room_imports_another_rooms_private_module() -> None:
    found = _private_imports_across_rooms()
    new = sorted(found - NOT_YET_THROUGH_THE_DOOR)
    assert not new, f"import these through the room's __init__ instead: {new}"


@pytest.mark.parametrize(
    ("source", "module"),
    [
        ("from ..reporting._files import flatten", "reporting._files"),
        ("from ..backends import _wire", "backends._wire"),
        ("import hookbus.runners.envs._env", "envs._env"),
        (
            "from hookbus.runners.algorithm._checkpoint import read_checkpoint",
            "algorithm._checkpoint",
        ),
        ("if TYPE_CHECKING:\n    from ..fleet._group import EnvRunnerGroup", "fleet._group"),
    ],
)
def test_the_walk_sees_each_form_of_import(source: str, module: str) -> None:
    found = set(_imported_modules(Path("app/_cli.py"), source))
    assert (*PACKAGE, *module.split(".")) in found
