"""How to build a module: RLlib's ``RLModuleSpec`` and ``MultiRLModuleSpec``, and
``RandomRLModule``.

A spec names a module class (None: the algorithm's own, which its learner builds and
trains) with its spaces and ``model_config``; ``config.rl_module(rl_module_spec=...)`` and
``Algorithm.add_module(module_id, module_spec)`` take them, as in RLlib. A class of your
own is constructed with RLlib's keywords (those its ``__init__`` takes) and needs only
``forward_inference(obs) -> actions``: the minimal module protocol, ``RLModule`` in
``runners/_rl_module.py`` (docs/multi_agent.md). Here in the config, which takes and checks
them; the Algorithm, its learners and the module checkpoints, above it, build from them.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from hookbus.events import publish_names
from hookbus.kernel import ConfigError

__all__ = ("MultiRLModuleSpec", "RLModuleSpec", "RandomRLModule", "module_kind")

_KEYWORDS = ("observation_space", "action_space", "inference_only", "model_config")
"""What RLlib's ``RLModuleSpec.build()`` passes a module class (and ``catalog_class``)."""


@dataclasses.dataclass
class RLModuleSpec:
    """Build one module: its class, spaces and model settings (RLlib's ``RLModuleSpec``).

    ``module_class`` None means the algorithm's own module (PPO's), built and trained by
    its learner with ``model_config`` over the config's; a class of your own acts and is
    never trained (leave its module id out of ``policies_to_train``). Spaces left None
    are the env's, as for a policy (docs/multi_agent.md). ``learner_only``,
    ``catalog_class`` and ``load_state_path`` are RLlib's and kept as given; hookbus has
    no catalogs and loads state through checkpoints.
    """

    module_class: type[Any] | None = None
    observation_space: gym.Space[Any] | None = None
    action_space: gym.Space[Any] | None = None
    inference_only: bool = False
    learner_only: bool = False
    model_config: Mapping[str, Any] | None = None
    catalog_class: Any = None
    load_state_path: str | None = None

    def __post_init__(self) -> None:
        if self.module_class is not None and not isinstance(self.module_class, type):
            raise ConfigError(
                f"RLModuleSpec(module_class=...) takes a class, got {self.module_class!r}"
            )
        if self.inference_only and self.learner_only:
            raise ConfigError(
                "RLModuleSpec: inference_only=True and learner_only=True exclude each other"
            )
        model_config = self.model_config
        if model_config is not None and not isinstance(model_config, Mapping):
            to_dict = getattr(model_config, "to_dict", None)  # a DefaultModelConfig
            if to_dict is None:
                raise ConfigError(
                    f"RLModuleSpec(model_config=...) takes a dict or DefaultModelConfig, "
                    f"got {model_config!r}"
                )
            self.model_config = to_dict()

    def build(self) -> Any:
        """Return a new module of ``module_class`` (ValueError without one, as RLlib's).

        The class gets RLlib's keywords (``observation_space``, ``action_space``,
        ``inference_only``, ``model_config``, ``catalog_class``) that its ``__init__``
        takes; one without an ``__init__`` of its own gets none, and the module then
        gets them as attributes (RLlib's ``RLModule`` has them).
        """
        cls = self.module_class
        if cls is None:
            raise ValueError(
                "RLModule class is not set: the algorithm's own module is built by its "
                "learner (Algorithm.add_module, config.rl_module)"
            )
        values = {name: getattr(self, name) for name in _KEYWORDS}
        values["model_config"] = dict(self.model_config or {})
        module = cls(**_accepted(cls, {**values, "catalog_class": self.catalog_class}))
        for name, value in values.items():
            if not hasattr(module, name):
                setattr(module, name, value)
        check_module(module, cls)
        return module

    @classmethod
    def from_module(cls, module: Any) -> RLModuleSpec:
        """Return the spec that builds a module like ``module`` (RLlib's classmethod).

        Reads its ``observation_space``, ``action_space``, ``inference_only`` and
        ``model_config`` (hookbus's modules and ``RandomRLModule`` have them).
        """
        if isinstance(module, Mapping):
            raise ValueError("MultiRLModule cannot be converted to RLModuleSpec.")
        missing = [n for n in ("observation_space", "action_space") if not hasattr(module, n)]
        if missing:
            raise ValueError(
                f"RLModuleSpec.from_module(): {type(module).__name__} has no "
                f"{' and no '.join(missing)} attribute to build a spec from"
            )
        return cls(
            module_class=type(module),
            observation_space=module.observation_space,
            action_space=module.action_space,
            inference_only=bool(getattr(module, "inference_only", False)),
            learner_only=bool(getattr(module, "learner_only", False)),
            model_config=dict(getattr(module, "model_config", None) or {}),
        )

    def as_multi_rl_module_spec(self) -> MultiRLModuleSpec:
        """Return a MultiRLModuleSpec holding this spec as ``default_policy``."""
        return MultiRLModuleSpec(rl_module_specs={"default_policy": self})


@dataclasses.dataclass
class MultiRLModuleSpec:
    """Build one module per module id (RLlib's ``MultiRLModuleSpec``).

    ``rl_module_specs`` maps module ids to ``RLModuleSpec``s; without ``policies`` set
    in ``config.multi_agent()``, its ids are the policies. ``observation_space``,
    ``action_space``, ``inference_only`` and ``model_config`` fill what a module's spec
    leaves unset. ``multi_rl_module_class`` and the loading fields are RLlib's, kept as
    given (hookbus's multi-module is ``MultiAgentModule``).
    """

    multi_rl_module_class: Any = None
    observation_space: gym.Space[Any] | None = None
    action_space: gym.Space[Any] | None = None
    inference_only: bool | None = None
    model_config: Mapping[str, Any] | None = None
    rl_module_specs: dict[str, RLModuleSpec] | None = None
    load_state_path: str | None = None
    modules_to_load: set[str] | None = None

    def __post_init__(self) -> None:
        specs = self.rl_module_specs
        if specs is None:
            return
        if not isinstance(specs, Mapping):
            raise ConfigError(
                f"MultiRLModuleSpec(rl_module_specs=...) takes a dict of module id to "
                f"RLModuleSpec, got {specs!r}"
            )
        for module_id, spec in specs.items():
            if not isinstance(spec, RLModuleSpec):
                raise ConfigError(
                    f"MultiRLModuleSpec: rl_module_specs[{module_id!r}] must be an "
                    f"RLModuleSpec, got {spec!r}"
                )
        self.rl_module_specs = dict(specs)

    def spec_for(self, module_id: str) -> RLModuleSpec:
        """Return module ``module_id``'s spec, its unset fields filled from this one."""
        spec = (self.rl_module_specs or {}).get(module_id) or RLModuleSpec()
        filled = {
            name: getattr(self, name)
            for name in ("observation_space", "action_space", "model_config")
            if getattr(spec, name) is None and getattr(self, name) is not None
        }
        if self.inference_only is not None and not spec.inference_only:
            filled["inference_only"] = self.inference_only
        return dataclasses.replace(spec, **filled) if filled else spec

    def add_modules(self, specs: Mapping[str, RLModuleSpec], override: bool = True) -> None:
        """Add (or, with ``override``, replace) module specs by id (RLlib's method)."""
        current = dict(self.rl_module_specs or {})
        for module_id, spec in specs.items():
            if module_id in current and not override:
                raise ValueError(f"module spec {module_id!r} already exists")
            current[module_id] = spec
        self.rl_module_specs = current

    def remove_modules(self, module_ids: str | list[str]) -> None:
        """Remove the specs of ``module_ids`` (RLlib's method)."""
        ids = [module_ids] if isinstance(module_ids, str) else module_ids
        self.rl_module_specs = {
            k: v for k, v in (self.rl_module_specs or {}).items() if k not in ids
        }


class RandomRLModule:
    """Act uniformly at random in the action space (RLlib's example ``RandomRLModule``).

    A module of the minimal protocol: an opponent for self-play, never trained (its
    learner refuses updates: leave its id out of ``policies_to_train``).
    """

    def __init__(
        self,
        observation_space: gym.Space[Any] | None = None,
        action_space: gym.Space[Any] | None = None,
        *,
        inference_only: bool = False,
        model_config: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Keep the spaces (RLlib's keywords; others, such as ``catalog_class``, unused)."""
        if action_space is None:
            raise ValueError("RandomRLModule needs an action_space to sample from")
        self.observation_space = observation_space
        self.action_space = action_space
        self.inference_only = inference_only
        self.model_config = dict(model_config or {})

    def forward_inference(self, obs: NDArray[Any], /) -> NDArray[Any]:
        """Return one action per row of ``obs``, each sampled from the action space."""
        return np.asarray([self.action_space.sample() for _ in range(len(obs))])

    def forward_exploration(self, obs: NDArray[Any], rng: np.random.Generator, /) -> NDArray[Any]:
        """Return one random action per row of ``obs`` (as ``forward_inference``)."""
        return self.forward_inference(obs)

    def get_state(self) -> dict[str, Any]:
        """Return no state: the module has no weights."""
        return {}

    def set_state(self, state: dict[str, Any], /) -> None:
        """Take no state (an empty dict, as ``get_state()`` gives)."""
        if state:
            raise ValueError(f"RandomRLModule has no state to load, got keys {sorted(state)!r}")

    def __repr__(self) -> str:
        return f"RandomRLModule({self.action_space})"


def module_kind(spec: RLModuleSpec | None, default: type[Any] | None) -> str:
    """Tell what builds the module of ``spec``: ``"learner"`` (the algorithm's own module
    class ``default``, or none named) or ``"class"`` (a class of the user's: it acts only)."""
    if spec is None or spec.module_class is None or spec.module_class is default:
        return "learner"
    return "class"


def check_module(module: Any, cls: type[Any]) -> None:
    """Raise ConfigError unless ``module`` has what the runners and checkpoints call."""
    needed = ("forward_inference", "forward_exploration", "get_state", "set_state")
    missing = [name for name in needed if not callable(getattr(module, name, None))]
    if missing:
        raise ConfigError(
            f"module class {cls.__qualname__} lacks {', '.join(missing)}: a module needs "
            f"forward_inference(obs) -> actions; subclass hookbus.runners.RLModule for the "
            f"rest (forward_exploration acts as forward_inference, no state)"
        )


def _accepted(cls: type[Any], values: dict[str, Any]) -> dict[str, Any]:
    """Return the keywords of ``values`` that ``cls``'s ``__init__`` takes."""
    init = cls.__init__
    if init is object.__init__ or getattr(init, "__name__", "") == "_no_init_or_replace_init":
        return {}  # no __init__ of its own (a Protocol's subclass gets typing's stand-in)
    try:
        parameters = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return values
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return values
    names = {p.name for p in parameters}
    return {name: value for name, value in values.items() if name in names}


# hookbus's module classes report their public home, ``hookbus.runners``, from the moment
# they exist: a checkpoint's module file names a class by it (``algorithm/_module_files``),
# and pickling by reference looks it up there.
publish_names("hookbus.runners", globals(), ["RandomRLModule"])
