"""RLlib's names for callback modules, served by hookbus where Ray is not installed (opt-in).

A module of RLlib callbacks imports ``RLlibCallback``, metric-name constants and episode
classes from ``ray.rllib``; with no Ray in a test's venv it fails at import, before any
replay. Under the pytest ini option ``hookbus_rllib_standin = true`` (the plugin calls
``install()``), and only when Ray is not installed, a meta-path finder serves the modules in
``MODULES`` as hookbus's stand-ins: ``RLlibCallback`` here (RLlib's hooks and signatures, as
no-ops), RLlib 2.60's constants, and hookbus's own classes for the episodes, the
MetricsLogger, the Algorithm and the rest. Every stand-in module says so (its docstring and
``__hookbus_standin__ = True``); a name it lacks raises ``RLlibStandInError``, naming the
option. Without the option, or with Ray installed, nothing named ``ray`` is made up.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from hookbus.kernel import HookbusError

from ._rllib_standin_classes import DefaultCallbacks, RLlibCallback, override, tag
from ._rllib_standin_names import CORE, METRICS

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = (
    "MODULES",
    "OPTION",
    "RLlibStandInError",
    "install",
    "installed",
    "ray_is_installed",
    "uninstall",
)

OPTION = "hookbus_rllib_standin"
"""The pytest ini option that installs the stand-in."""

ORIGIN = "hookbus's RLlib stand-in"
"""The stand-in modules' ``__spec__.origin`` (their repr shows it)."""


class RLlibStandInError(HookbusError, ImportError):
    """Raise when a module of the RLlib stand-in is asked for a name it does not provide.

    An ImportError (not an AttributeError, which ``from m import name`` would replace by
    Python's own message), with the option and what to do in its message.
    """


def _names(module: str, names: Sequence[str]) -> Callable[[], dict[str, Any]]:
    """Return a builder taking ``names`` from hookbus's ``module`` (imported when used)."""

    def build() -> dict[str, Any]:
        source = importlib.import_module(module)
        return {name: getattr(source, name) for name in names}

    return build


def _values(values: dict[str, Any]) -> Callable[[], dict[str, Any]]:
    return lambda: dict(values)


def _typing() -> dict[str, Any]:
    # RLlib's type aliases, for annotations: at run time any value fits them.
    names = (
        "AgentID EnvConfigDict EnvID EnvType EpisodeID EpisodeType ModuleID MultiAgentDict "
        "PolicyID ResultDict StateDict TensorStructType TensorType"
    )
    return dict.fromkeys(names.split(), Any)


_CALLBACKS = {"RLlibCallback": RLlibCallback}
_ANNOTATIONS = {
    "override": override,
    "DeveloperAPI": tag,
    "ExperimentalAPI": tag,
    "OldAPIStack": tag,
    "OverrideToImplementCustomLogic": tag,
    "OverrideToImplementCustomLogic_CallToSuperRecommended": tag,
    "PublicAPI": tag,
}

MODULES: dict[str, tuple[str, Callable[[], dict[str, Any]]]] = {
    "ray": ("Ray (its modules that RLlib callback modules import)", dict),
    "ray.rllib": ("RLlib", dict),
    "ray.rllib.algorithms": ("RLlib's algorithms package", dict),
    "ray.rllib.algorithms.algorithm": (
        "the Algorithm (hookbus's)",
        _names("hookbus.runners", ["Algorithm"]),
    ),
    "ray.rllib.algorithms.algorithm_config": (
        "the AlgorithmConfig (hookbus's)",
        _names("hookbus.runners", ["AlgorithmConfig"]),
    ),
    "ray.rllib.algorithms.callbacks": (
        "the old callbacks module",
        _values({**_CALLBACKS, "DefaultCallbacks": DefaultCallbacks}),
    ),
    "ray.rllib.callbacks": ("RLlib's callbacks package", dict),
    "ray.rllib.callbacks.callbacks": ("RLlibCallback", _values(_CALLBACKS)),
    "ray.rllib.core": ("RLlib's module ids", _values(CORE)),
    "ray.rllib.core.rl_module": (
        "RLModule and its specs (hookbus's)",
        _names(
            "hookbus.runners", ["MultiRLModule", "MultiRLModuleSpec", "RLModule", "RLModuleSpec"]
        ),
    ),
    "ray.rllib.core.rl_module.rl_module": (
        "RLModule and RLModuleSpec (hookbus's)",
        _names("hookbus.runners", ["RLModule", "RLModuleSpec"]),
    ),
    "ray.rllib.core.rl_module.multi_rl_module": (
        "MultiRLModule and its spec (hookbus's)",
        _names("hookbus.runners", ["MultiRLModule", "MultiRLModuleSpec"]),
    ),
    "ray.rllib.env": ("RLlib's env package", dict),
    "ray.rllib.env.env_context": (
        "EnvContext (hookbus's)",
        _names("hookbus.runners", ["EnvContext"]),
    ),
    "ray.rllib.env.env_runner": ("EnvRunner (hookbus's)", _names("hookbus.runners", ["EnvRunner"])),
    "ray.rllib.env.multi_agent_episode": (
        "MultiAgentEpisode (hookbus's)",
        _names("hookbus.runners", ["MultiAgentEpisode"]),
    ),
    "ray.rllib.env.single_agent_episode": (
        "SingleAgentEpisode (hookbus's)",
        _names("hookbus.runners", ["SingleAgentEpisode"]),
    ),
    "ray.rllib.utils": ("RLlib's utils package", dict),
    "ray.rllib.utils.annotations": (
        "RLlib's decorators (override, PublicAPI, ...)",
        _values(_ANNOTATIONS),
    ),
    "ray.rllib.utils.metrics": ("RLlib 2.60's metric-name constants", _values(METRICS)),
    "ray.rllib.utils.metrics.metrics_logger": (
        "MetricsLogger (hookbus's)",
        _names("hookbus.metrics", ["MetricsLogger"]),
    ),
    "ray.rllib.utils.typing": ("RLlib's type aliases (as typing.Any)", _typing),
}
"""Stand-in module name -> (what it holds, a function returning its names)."""

_PACKAGES = frozenset(name.rpartition(".")[0] for name in MODULES) - {""}


def ray_is_installed() -> bool:
    """Tell whether a real Ray can be imported (a bare ``ray/`` folder with no
    ``__init__.py`` on ``sys.path``, such as Ray's own temp folder, is not one)."""
    spec = importlib.util.find_spec("ray")
    return spec is not None and spec.origin is not None


def installed() -> bool:
    """Tell whether the stand-in's finder is in ``sys.meta_path``."""
    return any(isinstance(finder, _Finder) for finder in sys.meta_path)


def install() -> bool:
    """Serve the stand-in modules if Ray is not installed; return whether they are served."""
    if installed():
        return True
    if ray_is_installed():
        return False
    sys.meta_path.insert(0, _Finder())  # first: a bare ray/ folder must not shadow it
    return True


def uninstall() -> None:
    """Remove the finder and forget the stand-in modules imported so far."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _Finder)]
    for name in [n for n, m in sys.modules.items() if getattr(m, "__hookbus_standin__", False)]:
        del sys.modules[name]


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Find and build the stand-in modules; refuse the other ``ray`` names, saying why."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "ray" and not fullname.startswith("ray."):
            return None
        if fullname not in MODULES:
            raise ModuleNotFoundError(_missing_module(fullname), name=fullname)
        return importlib.util.spec_from_loader(
            fullname, self, origin=ORIGIN, is_package=fullname in _PACKAGES
        )

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # the default module

    def exec_module(self, module: ModuleType) -> None:
        name = module.__name__
        what, build = MODULES[name]
        names = build()
        module.__doc__ = (
            f"hookbus's stand-in for {name}: {what}. Ray is not installed, and the pytest ini "
            f"option {OPTION} = true asked hookbus to serve RLlib's names for callback "
            f"modules; this module has only {', '.join(sorted(names)) or 'its submodules'}."
        )
        vars(module).update(names)
        module.__all__ = tuple(sorted(names))  # type: ignore[attr-defined]
        module.__hookbus_standin__ = True  # type: ignore[attr-defined]
        module.__getattr__ = _module_getattr(name)  # type: ignore[method-assign]


def _module_getattr(module: str) -> Callable[[str], Any]:
    def __getattr__(name: str) -> Any:
        if name.startswith("_"):  # Python's and tools' probing: the usual AttributeError
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        if f"{module}.{name}" in MODULES:  # ``from ray.rllib import utils``
            return importlib.import_module(f"{module}.{name}")
        raise RLlibStandInError(
            f"{module}.{name} is not provided by hookbus's RLlib stand-in (the pytest ini "
            f"option {OPTION} = true, with Ray not installed): it serves only the names "
            f"callback modules import (docs/testing.md lists them); install Ray "
            f"(pip install 'hookbus[rllib]') to test with RLlib's own",
            name=module,
        )

    return __getattr__


def _missing_module(fullname: str) -> str:
    return (
        f"No module named {fullname!r}: Ray is not installed, and hookbus's RLlib stand-in "
        f"(the pytest ini option {OPTION} = true) provides only {', '.join(sorted(MODULES))} "
        f"(docs/testing.md); install Ray (pip install 'hookbus[rllib]') to use the rest"
    )
