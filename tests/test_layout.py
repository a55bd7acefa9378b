"""The house's floors: packages and rooms import downwards only, and never in a circle.

The four packages depend one way (SPEC.md, "Layout"): ``events`` and ``metrics`` import
neither each other nor the rest, ``kernel`` uses ``events`` (and ``metrics`` only where a
replay feeds a MetricsLogger), ``runners`` uses all three. Inside ``runners/``, a room is a
sub-package (``envs/``, ``backends/``, ``algorithm/``...): what other rooms may use, its
``__init__`` exports; everything in its ``_modules`` may change without notice.

This walks the source with ``ast`` (importing nothing), so an import under
``if TYPE_CHECKING:`` or inside a function counts too: a function that imports the floor
above closes a circle all the same, one that shows later. Strings that name a module for a
lazy import (``BACKENDS``, a package's table of names imported on first use, a worker's
``-c`` line) are not imports: what is named that way is data, fixed in our code.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("events", "kernel", "metrics", "runners")
RUNNERS = ("hookbus", "runners")

Module = tuple[str, ...]
"""A module's full name split at its dots: ``("hookbus", "runners", "config", "_settings")``."""

# Imports still to move to their room's door: (importing file, imported private module).
# The pytest plugin's and inspect's (issues 46 and 47), whose rooms' doors other work changes.
NOT_YET_THROUGH_THE_DOOR: set[tuple[str, str]] = {
    ("app/_inspect_summary.py", "episodes._gaps"),
    ("app/_pytest_plugin.py", "bridges._bus"),
    ("app/_pytest_plugin.py", "bridges._rllib_replay"),
    ("app/_pytest_plugin.py", "bridges._rllib_standin"),
}

# Imports that still close a circle: (importer, imported), names without "hookbus.".
CIRCLES_STILL_OPEN: set[tuple[str, str]] = {
    # Types only, both: DQNConfig's type argument names the class its build() returns
    # (AlgorithmConfig["DQN"], which runs by name: AlgorithmClass("DQN")), and DQN reads
    # its config's own settings. Breaking it costs users DQNConfig().build()'s type.
    ("runners.algorithms.dqn._config", "runners.algorithms.dqn._algorithm"),
    # The sampling loops name the EnvRunner they step (a Protocol of what they read of it
    # would break it): env_runner/ is being reworked for the episode publisher (issue 48).
    ("runners.env_runner._sampling", "runners.env_runner._env_runner"),
}


MAX_LINES = 600


class Import(NamedTuple):
    """A module of ours an import statement makes Python run, and where the statement is."""

    target: Module
    line: int
    where: str  # "at the top", "in a function", "under TYPE_CHECKING"


def _dotted(module: Module) -> str:
    return ".".join(module[1:])


# --- walking the source -------------------------------------------------------------------


@cache
def _modules() -> dict[Module, Path]:
    """Every module of the four packages by full name (a package by its own name)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = ("hookbus", *path.relative_to(ROOT).with_suffix("").parts)
            found[name[:-1] if name[-1] == "__init__" else name] = path
    return found


def _statements(tree: ast.AST) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    """Yield every import statement in ``tree`` with where it is (``Import.where``)."""

    def walk(node: ast.AST, where: str) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for statement in child.body:
                    yield from walk(ast.Module([statement], []), "under TYPE_CHECKING")
                for statement in child.orelse:
                    yield from walk(ast.Module([statement], []), where)
                continue
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child, where
            inner = where
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                inner = "in a function" if where == "at the top" else where
            yield from walk(child, inner)

    yield from walk(tree, "at the top")


def _named_modules(importer: Module, is_package: bool, source: str) -> Iterator[Import]:
    """Yield every name an import in ``source`` (module ``importer``) imports from: the
    module, and for ``from m import a`` also ``m.a``, which may be a module too
    (``from ..backends import _wire``). Names of anyone's, not only ours.

    Relative imports start from the importer's package (a package's ``__init__`` is its own).
    """
    here = importer if is_package else importer[:-1]
    for node, where in _statements(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(tuple(alias.name.split(".")), node.lineno, where)
        else:
            base = here[: len(here) - node.level + 1] if node.level else ()
            module = (*base, *(node.module.split(".") if node.module else ()))
            yield Import(module, node.lineno, where)
            yield from (Import((*module, a.name), node.lineno, where) for a in node.names)


def _statement_targets(importer: Module, node: ast.Import | ast.ImportFrom) -> Iterator[Module]:
    """Yield the modules of ours statement ``node`` of ``importer`` names: for
    ``from m import a``, module ``m.a`` if there is one, else ``m`` (which defines ``a``)."""
    modules = _modules()
    here = importer if modules[importer].name == "__init__.py" else importer[:-1]
    if isinstance(node, ast.Import):
        named = [tuple(alias.name.split(".")) for alias in node.names]
    else:
        base = here[: len(here) - node.level + 1] if node.level else ()
        module = (*base, *(node.module.split(".") if node.module else ()))
        named = [(*module, a.name) if (*module, a.name) in modules else module for a in node.names]
    for target in named:
        while target not in modules and len(target) > 2:
            target = target[:-1]
        if target in modules:
            yield target


def _imports_in(importer: Module, source: str) -> tuple[Import, ...]:
    """Return the modules of ours that ``source``, module ``importer``, makes Python run,
    the first import of each.

    Running a module runs the packages above it first, so those count too, but for the
    importer's own packages, which run already (``from . import _x`` imports no name of
    its package). A package named outright counts even so (``import hookbus.runners``).
    """
    found: dict[Module, Import] = {}
    for node, where in _statements(ast.parse(source)):
        for target in _statement_targets(importer, node):
            above = [target[:n] for n in range(2, len(target))]
            for module in [target, *(a for a in above if importer[: len(a)] != a)]:
                if module != importer:
                    found.setdefault(module, Import(module, node.lineno, where))
    return tuple(found.values())


@cache
def _imports(importer: Module) -> tuple[Import, ...]:
    return _imports_in(importer, _modules()[importer].read_text())


def _graph() -> dict[Module, list[Import]]:
    """Every module of ours and what it imports, leaving out ``CIRCLES_STILL_OPEN``."""
    return {
        module: [
            i
            for i in _imports(module)
            if (_dotted(module), _dotted(i.target)) not in CIRCLES_STILL_OPEN
        ]
        for module in _modules()
    }


# --- circles ------------------------------------------------------------------------------


def _circles(graph: dict[Module, list[Import]]) -> list[list[Module]]:
    """Return the strongly connected groups of ``graph`` with more than one module
    (Tarjan's algorithm, iterative): each holds at least one circle."""
    index: dict[Module, int] = {}
    low: dict[Module, int] = {}
    stack: list[Module] = []
    on_stack: set[Module] = set()
    groups = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for edge in edges:
                nxt = edge.target
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph[nxt])))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))
    return groups


def _shortest_circle(graph: dict[Module, list[Import]], group: list[Module]) -> str:
    """Describe the shortest circle through the first module of ``group``, import by import."""
    members, start = set(group), group[0]
    came: dict[Module, tuple[Module, Import]] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for edge in graph[node]:
            if edge.target not in members or edge.target in came:
                continue
            came[edge.target] = (node, edge)
            if edge.target == start:
                queue.clear()
                break
            queue.append(edge.target)
    steps, node = [], start
    while True:
        before, edge = came[node]
        steps.append(f"{_dotted(before)} -> {_dotted(node)} (line {edge.line}, {edge.where})")
        node = before
        if node == start:
            break
    return f"{len(group)} modules in a circle, e.g.:\n    " + "\n    ".join(reversed(steps))


def test_no_module_imports_its_way_back_to_itself() -> None:
    graph = _graph()
    circles = [_shortest_circle(graph, group) for group in _circles(graph)]
    assert not circles, "\n".join(circles)


def test_the_circles_still_open_are_still_imports() -> None:
    """An entry of ``CIRCLES_STILL_OPEN`` whose import is gone must leave the list."""
    imports = {(_dotted(m), _dotted(i.target)) for m in _modules() for i in _imports(m)}
    assert CIRCLES_STILL_OPEN <= imports, sorted(CIRCLES_STILL_OPEN - imports)


@pytest.mark.parametrize(
    ("source", "edges"),
    [
        ("def f():\n    from ..algorithms import x", [("runners.algorithms", "in a function")]),
        (
            "if TYPE_CHECKING:\n    from ..fleet._group import G",
            [
                ("runners.fleet._group", "under TYPE_CHECKING"),
                ("runners.fleet", "under TYPE_CHECKING"),
            ],
        ),
        ("from . import _config", [("runners.config._config", "at the top")]),
        ("from . import NOT_SET", [("runners.config", "at the top")]),
        ("import hookbus.runners", [("runners", "at the top")]),
        (
            "from hookbus.events import codec",
            [("events.codec", "at the top"), ("events", "at the top")],
        ),
        (
            "class A:\n    async def f(self):\n        import hookbus.kernel",
            [("kernel", "in a function")],
        ),
        ("import numpy\nfrom typing import Any", []),
    ],
)
def test_the_graph_sees_each_form_of_import(source: str, edges: list[tuple[str, str]]) -> None:
    found = _imports_in(("hookbus", "runners", "config", "_checks"), source)
    assert [(_dotted(i.target), i.where) for i in found] == edges


def test_the_circle_finder_names_a_circle() -> None:
    def edges(*targets: str) -> list[Import]:
        return [Import(("hookbus", t), 1, "in a function") for t in targets]

    graph = {
        ("hookbus", "a"): edges("b"),
        ("hookbus", "b"): edges("c"),
        ("hookbus", "c"): edges("a", "d"),
        ("hookbus", "d"): [],
    }
    groups = _circles(graph)
    assert groups == [[("hookbus", "a"), ("hookbus", "b"), ("hookbus", "c")]]
    described = _shortest_circle(graph, groups[0])
    assert "a -> b (line 1, in a function)\n    b -> c" in described
    assert described.endswith("c -> a (line 1, in a function)")


# --- module sizes -------------------------------------------------------------------------


def test_no_module_is_over_600_lines() -> None:
    long = {
        path.relative_to(ROOT).as_posix(): lines
        for path in _modules().values()
        if (lines := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"split these by direction of change (at most {MAX_LINES} lines): {long}"


# --- the four packages --------------------------------------------------------------------

MAY_IMPORT = {
    "events": set(),
    "metrics": set(),
    "kernel": {"events", "metrics"},
    "runners": {"events", "kernel", "metrics"},
}
"""Package -> the other packages of ours it may import (SPEC.md, Layout)."""

KERNEL_MODULES_WITH_METRICS = {"_replay", "_replay_metrics", "_rules"}
"""The kernel's modules where a replay feeds a MetricsLogger: the only ones using metrics."""

THIRD_PARTY_HOMES = {
    "gymnasium": ("runners",),
    "ray.rllib": ("runners", "bridges"),
    "stable_baselines3": ("runners", "bridges"),
}
"""A distribution -> where it may be imported (SPEC.md: only ``runners`` imports gymnasium;
RLlib and SB3 only its bridges)."""


def _every_import() -> Iterator[tuple[Module, Import]]:
    for importer, path in _modules().items():
        is_package = path.name == "__init__.py"
        for named in _named_modules(importer, is_package, path.read_text()):
            yield importer, named


def test_packages_import_only_the_packages_below_them() -> None:
    wrong = sorted(
        f"{_dotted(importer)} imports {_dotted(i.target)} (line {i.line}, {i.where})"
        for importer in _modules()
        for i in _imports(importer)
        if i.target[1] != importer[1] and i.target[1] not in MAY_IMPORT[importer[1]]
    )
    assert not wrong, "\n".join(wrong)


def test_the_kernel_uses_metrics_only_to_replay_into_a_logger() -> None:
    using = {
        importer[2]
        for importer in _modules()
        if importer[1] == "kernel" and any(i.target[1] == "metrics" for i in _imports(importer))
    }
    assert using <= KERNEL_MODULES_WITH_METRICS, sorted(using - KERNEL_MODULES_WITH_METRICS)


def test_no_package_imports_another_packages_private_module() -> None:
    wrong = sorted(
        {
            f"{_dotted(importer)} imports {_dotted(i.target[:3])} (line {i.line})"
            for importer, i in _every_import()
            if i.target[:1] == ("hookbus",)
            and len(i.target) > 2
            and i.target[1] != importer[1]
            and i.target[2].startswith("_")
        }
    )
    assert not wrong, "import it from the package itself:\n" + "\n".join(wrong)


@pytest.mark.parametrize(("distribution", "home"), THIRD_PARTY_HOMES.items())
def test_frameworks_are_imported_only_in_their_rooms(distribution: str, home: Module) -> None:
    name = tuple(distribution.split("."))
    wrong = sorted(
        f"{_dotted(importer)} (line {i.line})"
        for importer, i in _every_import()
        if i.target[: len(name)] == name and importer[1 : 1 + len(home)] != home
    )
    assert not wrong, f"{distribution} imported outside {'/'.join(home)}/: {wrong}"


# --- rooms of runners/ --------------------------------------------------------------------

FLOORS: tuple[tuple[str, ...], ...] = (
    ("house",),  # runners/_*.py, the modules every room may use: types, errors, the loop...
    ("episodes", "reporting", "callbacks"),  # episodes and what writes results: no runner
    ("envs",),  # what users hand in, made into envs
    ("bridges",),  # the bus inside RLlib's and SB3's runs: episodes and envs, nothing above
    ("config",),  # the settings, backends known by name only
    ("env_runner",),  # stepping envs into episodes, with a config
    ("backends",),  # where a runner runs
    ("fleet",),  # many runners as one
    ("algorithm",),  # the Algorithm and what it owns
    ("algorithms",),  # PPO and DQN
    ("app",),  # the command line and the pytest plugin
)
"""The rooms of ``runners/``, lowest first: a room imports only rooms on floors below its own
(the runners' own ``__init__``, the door for users, is above them all)."""


def _room(module: Module) -> str | None:
    """The room of a module of ``runners/`` (``"house"`` for ``runners/_*.py``); None for
    ``hookbus.runners`` itself and for modules of other packages."""
    if module[:2] != RUNNERS or len(module) == 2:
        return None
    return "house" if module[2].startswith("_") else module[2]


def _floor(room: str | None) -> int:
    if room is None:
        return len(FLOORS)  # the door: above every room
    return next(n for n, rooms in enumerate(FLOORS) if room in rooms)


def test_every_room_has_a_floor() -> None:
    rooms = {_room(module) for module in _modules()} - {None}
    placed = {room for rooms in FLOORS for room in rooms}
    assert rooms == placed, f"place these rooms on a floor: {sorted(rooms - placed)}"


def test_rooms_import_only_the_floors_below_them() -> None:
    wrong = sorted(
        f"{_dotted(importer)} imports {_dotted(i.target)} (line {i.line}, {i.where})"
        for importer in _modules()
        if (room := _room(importer)) is not None
        for i in _imports(importer)
        if i.target[:2] == RUNNERS
        and _room(i.target) != room
        and _floor(_room(i.target)) >= _floor(room)
    )
    assert not wrong, "an import up (or across) the floors:\n" + "\n".join(wrong)


def _private_imports_across_rooms() -> set[tuple[str, str]]:
    """Return (file, room._module) for each import of another room's private module."""
    found = set()
    for importer, i in _every_import():
        relative = _modules()[importer].relative_to(ROOT / importer[1])
        if importer[:2] != RUNNERS or len(relative.parts) < 2:
            continue  # runners/__init__.py and its own modules: the house, not a room
        room, module = relative.parts[0], i.target
        if module[:2] == RUNNERS and len(module) >= 4:
            other, inner = module[2], module[3]
            if other != room and inner.startswith("_"):
                found.add((relative.as_posix(), f"{other}.{inner}"))
    return found


def test_no_room_imports_another_rooms_private_module() -> None:
    found = _private_imports_across_rooms()
    new = sorted(found - NOT_YET_THROUGH_THE_DOOR)
    assert not new, f"import these through the room's __init__ instead: {new}"
    assert not NOT_YET_THROUGH_THE_DOOR - found, "gone: drop it from NOT_YET_THROUGH_THE_DOOR"


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
        ("def f():\n    from ..fleet._group import EnvRunnerGroup", "fleet._group"),
    ],
)
def test_the_walk_sees_each_form_of_private_import(source: str, module: str) -> None:
    found = {i.target for i in _named_modules((*RUNNERS, "app", "_cli"), False, source)}
    assert (*RUNNERS, *module.split(".")) in found
