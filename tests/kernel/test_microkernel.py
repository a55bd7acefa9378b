"""The kernel knows no reinforcement learning: no numpy, no episode, no import of the runners."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

KERNEL = Path(__file__).resolve().parents[2] / "kernel"


def _imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def _imports_by_name(path: Path) -> bool:
    """Whether ``path`` calls anything that imports a module named at run time."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in {"import_module", "__import__", "find_spec", "spec_from_file_location"}:
                return True
    return False


def test_kernel_sources_import_neither_numpy_nor_the_runners() -> None:
    for path in sorted(KERNEL.glob("*.py")):
        imported = _imported_modules(path)
        assert not {m for m in imported if m.split(".")[0] == "numpy"}, path.name
        assert not {m for m in imported if m.startswith("hookbus.runners")}, path.name
        # Not even lazily by name: the runners' rules arrive through an entry point.
        assert not _imports_by_name(path), path.name


def test_kernel_defines_no_episode() -> None:
    for path in sorted(KERNEL.glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        classes = [n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
        assert not [c for c in classes if "Episode" in c], path.name


def test_importing_the_kernel_leaves_the_runners_unimported() -> None:
    code = "import sys, hookbus.kernel; print('hookbus.runners' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
