"""AlgorithmConfig: RLlib's builder of settings, checked early and named in every error."""

from __future__ import annotations

import copy
import difflib
import math
import sys
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Generic, Literal, Self, TypeVar

import cloudpickle
import msgspec

from hookbus.kernel import Bus, BusOptions, ConfigError, check_callbacks

from .._deprecation import warn_deprecated
from .._errors import refuse_while_loading_main
from ..envs import resolve_registered_env
from ._flat import RLLIB_KEYS, callbacks_flat, from_rllib_keys, pop_callbacks_keys
from ._multi_agent import check_multi_agent, is_multi_agent
from ._placement import PlacementCalls
from ._rllib_attributes import RLlibAttributes
from ._sections import ConfigSections
from ._settings import (
    EnvRunnersSettings,
    EvaluationSettings,
    ReportingSettings,
    TrainingSettings,
)

__all__ = ("AlgorithmConfig",)

AlgorithmT = TypeVar("AlgorithmT")

# Settings that evaluation_config cannot override: the evaluation section itself (it steers
# the Algorithm, not the runners) and the evaluation runners' count, which has its own name.
_NOT_OVERRIDABLE = {
    *EvaluationSettings.__struct_fields__,
    *ReportingSettings.__struct_fields__,
    "num_env_runners",
}


class AlgorithmConfig(RLlibAttributes, ConfigSections, PlacementCalls, Generic[AlgorithmT]):
    """Collect an Algorithm's settings with chained calls, then ``build()`` it.

    Each method takes its section's settings as typed keywords (``training(lr=1e-3)``), with
    RLlib's names; ``sections`` maps each section to the struct of its names, types and
    defaults, through which config files and ``update_from_dict`` decode. Values are
    checked by ``validate()``, which ``build()`` runs. Read a setting as an attribute
    (``config.train_batch_size``); ``config.in_evaluation`` tells evaluation runners apart.

    The type parameter is the Algorithm ``build()`` returns (``PPOConfig`` builds ``PPO``).
    """

    algo_class: ClassVar[Callable[..., Any] | None] = None
    """The Algorithm class ``build()`` makes (each algorithm's config sets it)."""
    default_exploration_config: ClassVar[dict[str, Any]] = {"type": "StochasticSampling"}
    """What ``exploration_config=None`` means for this algorithm."""

    def __init__(self) -> None:
        super().__init__()
        _make_known_to_tune()
        self.in_evaluation = False
        self.callbacks_class: list[Any] = []
        self.callbacks_per_hook: dict[str, list[Callable[..., Any]]] = {}
        self.bus_options = BusOptions()
        """The options ``callbacks(...)`` set for the bus (``on_error``, ``plugins``, ...)."""

    # --- the builder ------------------------------------------------------------------------

    def callbacks(
        self,
        callbacks_class: object = None,
        *,
        on_error: str = "raise",
        plugins: bool | list[str] = False,
        quarantine_after: int = 3,
        statistics: bool = False,
        deadline: float | None = None,
        watchdog: float | None = None,
        **hook_callables: Any,
    ) -> Self:
        """Set the callback classes (or instances) and per-hook callables, as ``Bus(...)`` takes.

        Each call replaces what an earlier one set. Everything is checked here, as the bus
        would check it (hook names, handler signatures, classes, ``on_error``, plugin names):
        a bad value raises ConfigError now, not at ``build()`` or at its first event.
        """
        options = BusOptions.pick(locals())
        check_callbacks(callbacks_class, **options.keywords(), **hook_callables)
        self.callbacks_per_hook = {
            name: list(value) if isinstance(value, list | tuple) else [value]
            for name, value in hook_callables.items()
        }
        if callbacks_class is None:
            self.callbacks_class = []
        elif isinstance(callbacks_class, list | tuple):
            self.callbacks_class = list(callbacks_class)
        else:
            self.callbacks_class = [callbacks_class]
        self.bus_options = options
        return self

    def callbacks_dict(self) -> dict[str, Any]:
        """Return what ``callbacks(...)`` was given, as its keywords (empty if nothing set)."""
        if not (self.callbacks_class or self.callbacks_per_hook):
            return {}
        return {
            "callbacks_class": list(self.callbacks_class),
            **self.bus_options.keywords(),
            **{hook: list(fns) for hook, fns in self.callbacks_per_hook.items()},
        }

    # --- derived settings -------------------------------------------------------------------

    @property
    def rollout_fragment_length(self) -> int:
        """Env steps per sub-env per ``sample()``; "auto" splits ``train_batch_size`` evenly."""
        settings = self.settings(EnvRunnersSettings)
        value = settings.rollout_fragment_length
        if value == "auto":
            runners = max(1, settings.num_env_runners) * settings.num_envs_per_env_runner
            return max(1, math.ceil(self.settings(TrainingSettings).train_batch_size / runners))
        return int(value)

    @rollout_fragment_length.setter
    def rollout_fragment_length(self, value: int | Literal["auto"]) -> None:
        self.env_runners(rollout_fragment_length=value)

    @property
    def exploration(self) -> dict[str, Any]:
        """The exploration settings in force: ``exploration_config`` or the default."""
        return dict(self.exploration_config or self.default_exploration_config)

    def copy(self, copy_frozen: bool | None = None) -> Self:
        """Return an independent copy (callback instances and functions are shared).

        ``copy_frozen`` (RLlib's): True freezes the copy, False thaws it, None (default)
        keeps this config's state.
        """
        new = copy.copy(self)
        object.__setattr__(new, "_values", self._copy_values())
        object.__setattr__(new, "callbacks_class", list(self.callbacks_class))
        per_hook = {k: list(v) for k, v in self.callbacks_per_hook.items()}
        object.__setattr__(new, "callbacks_per_hook", per_hook)
        if copy_frozen is not None:
            object.__setattr__(new, "_is_frozen", copy_frozen)
        return new

    # --- RLlib's ways to make and keep configs ---------------------------------------------

    @classmethod
    def overrides(cls, **kwargs: Any) -> dict[str, Any]:
        """Return ``kwargs`` as setting overrides, checked against this class's settings.

        As RLlib's: for ``evaluation(evaluation_config=PPOConfig.overrides(explore=False))``.
        A name this config class has no setting for is a KeyError; ``lambda`` stands for
        ``lambda_``.
        """
        overrides = {}
        for key, value in kwargs.items():
            name = "lambda_" if key == "lambda" else key
            if name not in cls._section_of:
                raise KeyError(f"Invalid property name {key} for config class {cls.__name__}!")
            overrides[name] = value
        return overrides

    def to_dict(self) -> dict[str, Any]:
        """Return every setting in one flat dict with RLlib's keys, as RLlib's ``to_dict()``.

        ``d["lr"]``, ``d["lambda"]``, ``d["logger_config"]``; the callbacks under fixed keys
        (``callbacks``, ``callbacks_on_train_result``, ..., ``_flat.py``), classes and
        functions as they are. Ray Tune turns a config given as ``param_space`` into this
        dict, each trial back into a config (``update_from_dict``); ``result.config`` is it.
        ``to_dict_by_section()`` is the view by section.
        """
        flat = {
            RLLIB_KEYS.get(name, name): value
            for values in self._values.values()
            for name, value in msgspec.structs.asdict(values).items()
        }
        per_hook = self.callbacks_per_hook
        return {**flat, **callbacks_flat(self.callbacks_class, self.bus_options, per_hook)}

    def to_dict_by_section(self) -> dict[str, Any]:
        """Return the settings by section, and ``"callbacks"`` if any were set.

        ``"callbacks"`` holds ``callbacks(...)``'s keywords (classes and functions as they
        are), so that ``update_from_dict`` of the result rebuilds the config.
        """
        settings = super().to_dict_by_section()
        callbacks = self.callbacks_dict()
        if callbacks:
            settings["callbacks"] = callbacks
        return settings

    def update_from_dict(self, settings: Mapping[str, Any], *, where: str = "") -> Self:
        """Set settings from data, as ``ConfigSections.update_from_dict``; and callbacks.

        Takes ``to_dict()``'s flat form (RLlib's keys: ``lambda``, ``callbacks``,
        ``callbacks_on_train_result``, ...; a callbacks key given changes that part only)
        and ``to_dict_by_section()``'s, whose ``"callbacks"`` holds ``callbacks(...)``'s
        keywords. As in RLlib's dicts, ``"callbacks"`` may be a class or a list of them.
        """
        rest = from_rllib_keys(settings, self._section_of)
        flat_callbacks = pop_callbacks_keys(rest)
        callbacks = rest.pop("callbacks", None)
        super().update_from_dict(rest, where=where)
        if flat_callbacks is not None:
            self.callbacks(**self._callbacks_updated(flat_callbacks))
        elif isinstance(callbacks, Mapping):
            self.callbacks(**callbacks)
        elif callbacks is not None:
            self.callbacks(callbacks)
        return self

    def _callbacks_updated(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Return ``callbacks(...)``'s keywords: those set now, with ``given`` over them."""
        keywords = {
            "callbacks_class": list(self.callbacks_class),
            **self.bus_options.keywords(),
            **self.callbacks_per_hook,
            **given,
        }
        return {name: value for name, value in keywords.items() if value is not None}

    @classmethod
    def from_dict(cls, config_dict: dict[str, Any]) -> Self:
        """Return a new config with the settings of ``config_dict`` (``update_from_dict``)."""
        settings = {k: v for k, v in config_dict.items() if k != "_is_frozen"}
        return cls().update_from_dict(settings)

    def get(self, key: str, default: Any = None) -> Any:
        """Return setting ``key``, or ``default`` if there is none (RLlib's dict-like shim;
        Ray Tune reads a trainable's config this way)."""
        name = "lambda_" if key == "lambda" else key
        if name in self._section_of:
            return getattr(self, name)
        return default

    def rollouts(self, *args: Any, **kwargs: Any) -> Self:
        """Deprecated in RLlib: ``env_runners()``, with the same keywords."""
        warn_deprecated("AlgorithmConfig.rollouts(..)", "AlgorithmConfig.env_runners(..)")
        return self.env_runners(*args, **kwargs)

    @property
    def train_batch_size_per_learner(self) -> int:
        """RLlib's per-learner batch: hookbus has one learner, so ``train_batch_size``."""
        value: int = self.train_batch_size
        return value

    def freeze(self) -> None:
        """Make this config read-only: setting anything raises AttributeError (as RLlib)."""
        object.__setattr__(self, "_is_frozen", True)

    @property
    def is_frozen(self) -> bool:
        """Whether ``freeze()`` made this config read-only."""
        return self._is_frozen

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "_is_frozen", False):
            raise AttributeError(
                f"Cannot set attribute ({name}) of an already frozen AlgorithmConfig!"
            )
        super().__setattr__(name, value)

    @property
    def is_multi_agent(self) -> bool:
        """Whether this config trains several policies, or a MultiAgentEnv (RLlib's)."""
        return is_multi_agent(self)

    def get_evaluation_config_object(self) -> Self:
        """Return the config of the evaluation runners: a copy with ``evaluation_config`` applied.

        It has ``in_evaluation=True`` and ``num_env_runners=evaluation_num_env_runners``.
        An override naming no setting is a ConfigError that lists the allowed names.
        """
        overrides = self.evaluation_config or {}
        if not isinstance(overrides, dict):
            raise ConfigError(
                f"evaluation_config must be a dict of setting overrides or None, got {overrides!r}"
            )
        allowed = [name for name in self._section_of if name not in _NOT_OVERRIDABLE]
        unknown = [name for name in overrides if name not in allowed]
        if unknown:
            named = ", ".join(f"{name!r}{_override_hint(name, allowed)}" for name in unknown)
            raise ConfigError(
                f"evaluation_config cannot override {named}; allowed: {', '.join(allowed)}"
            )
        config = self.copy(copy_frozen=False)
        for name, value in overrides.items():
            setattr(config, name, copy.deepcopy(value))
        config.num_env_runners = self.evaluation_num_env_runners
        config.in_evaluation = True
        if self._is_frozen:
            config.freeze()
        return config

    # --- RLlib's switches, with hookbus's one setting each ----------------------------------

    enable_rl_module_and_learner: ClassVar[bool] = True
    """RLlib's switch, always on: hookbus has only the new API stack (RLModules, Learners)."""
    enable_env_runner_and_connector_v2: ClassVar[bool] = True
    """RLlib's switch, always on: hookbus has only the new API stack (EnvRunners)."""

    def api_stack(
        self,
        enable_rl_module_and_learner: bool | None = None,
        enable_env_runner_and_connector_v2: bool | None = None,
    ) -> Self:
        """Accept RLlib's new API stack (EnvRunners, Learners): the only one hookbus has.

        Both switches read True on every config (``config.enable_rl_module_and_learner``).
        """
        for name, value in (
            ("enable_rl_module_and_learner", enable_rl_module_and_learner),
            ("enable_env_runner_and_connector_v2", enable_env_runner_and_connector_v2),
        ):
            if value not in (None, True):
                raise ConfigError(
                    f"api_stack({name}={value!r}): hookbus has only RLlib's new API stack "
                    f"(EnvRunners and Learners); allowed: True, or leave it out"
                )
        return self

    def framework(self, framework: str | None = None, **settings: Any) -> Self:
        """Accept ``"numpy"``, hookbus's one framework (its learners are numpy)."""
        if framework not in (None, "numpy") or settings:
            given = ", ".join(
                [*([repr(framework)] if framework is not None else []), *map(str, settings)]
            )
            raise ConfigError(
                f"framework({given}): hookbus's learners are numpy, with no deep-learning "
                f"framework to choose or tune; allowed: framework('numpy'), or leave it out "
                f"(plug your own learner with training(learner_class=...))"
            )
        return self

    # --- checking and building --------------------------------------------------------------

    def validate(self) -> None:
        """Raise ConfigError naming the first bad setting and what it allows.

        Each setting's declared check (``_settings.py``), then each section's check of its
        settings together, then the checks across sections.
        """
        for info in self.setting_infos():
            if info.check is not None:
                info.check(info.name, getattr(self._values[info.section], info.name))
        for values in self._values.values():
            values.check()
        check_multi_agent(self)
        if self.env_task_fn is not None and self.gym_env_vectorize_mode == "VECTOR_ENTRY_POINT":
            raise ConfigError(
                "env_task_fn sets a task on each sub-env, and a gym_env_vectorize_mode="
                "'VECTOR_ENTRY_POINT' env has none to reach (it is one vector object); use "
                "'SYNC' or 'ASYNC', or set tasks on the vector env with foreach_env"
            )
        if self.evaluation_config:  # check the overrides' names and values now, not mid-run
            evaluation = self.get_evaluation_config_object()
            evaluation.evaluation_config = None
            evaluation.validate()

    def build(self, bus: Bus | None = None) -> AlgorithmT:
        """Check the settings and build the Algorithm (sharing ``bus`` if given).

        Outside an event loop the Algorithm is also set up before this returns (its envs
        made, ``on_algorithm_init`` published), ready for ``train()``. Inside one, it is only
        constructed: ``async with config.build() as algo`` sets it up.
        """
        refuse_while_loading_main()  # a worker re-running a script without the main guard
        if self.algo_class is None:
            raise ConfigError(
                f"{type(self).__name__} names no algorithm; use PPOConfig() or DQNConfig()"
            )
        self.validate()
        # The Algorithm copies the config (its registered env resolved) and checks it again
        # (cheap), as it does when built as ``PPO(config=...)``.
        algorithm: AlgorithmT = self.algo_class(self, bus=bus)
        return algorithm

    def build_algo(
        self, env: object = None, use_copy: bool = True, *, bus: Bus | None = None
    ) -> AlgorithmT:
        """Build the Algorithm: RLlib's name for ``build()`` since 2.41.

        As RLlib's, ``env`` (if given) sets this config's env first (and the evaluation
        config's, when one is set). ``use_copy`` is accepted for RLlib's scripts: the
        Algorithm always works on a checked copy of the config, whatever its value.
        """
        if env is not None:
            self.environment(env)
            overrides = self.evaluation_config
            if isinstance(overrides, dict):
                self.evaluation(evaluation_config={**overrides, "env": env})
        return self.build(bus)

    def resolved_copy(self) -> Self:
        """Return a copy whose env, if a name given to ``register_env``, is its creator.

        The setting resolves when it is made; this catches a name registered after it, so
        the creator ships with the config to worker processes and Ray actors.
        """
        config = self.copy()
        env = resolve_registered_env(config.env)
        if env is not config.env:
            values = config._values["environment"]
            config._values["environment"] = msgspec.structs.replace(values, env=env)
        return config

    def __repr__(self) -> str:
        return f"{type(self).__name__}(env={self.env!r}, backend={self.backend!r})"

    # --- what crosses to worker processes and Ray actors ------------------------------------

    def __getstate__(self) -> dict[str, Any]:
        """Split the settings: data ones as MessagePack, only those that may hold code pickled.

        A setting typed ``Any`` or holding ``Any`` (an env creator, a learner class, an
        ``env_config`` of the user's objects) is pickled as it is; the others (numbers,
        strings, flags) cross as msgspec-encoded data and decode through their types.
        """
        state = dict(self.__dict__)
        values = state.pop("_values")
        data: dict[str, dict[str, Any]] = {}
        objects: dict[str, dict[str, Any]] = {}
        for info in self.setting_infos():
            value = getattr(values[info.section], info.name)
            if info.by_value and value is not None:
                value = _ByValue(value)  # unpickles as the value itself
            target = objects if info.holds_objects else data
            target.setdefault(info.section, {})[info.name] = value
        state["_data"] = msgspec.msgpack.encode(data)
        state["_objects"] = objects
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Rebuild the sections from ``__getstate__``'s data and objects."""
        data = msgspec.msgpack.decode(state.pop("_data"))
        objects = state.pop("_objects")
        self.__dict__.update(state)
        self.__dict__["_values"] = {
            name: msgspec.structs.replace(
                msgspec.convert(data.get(name, {}), struct), **objects.get(name, {})
            )
            for name, struct in self.sections.items()
        }


class _ByValue:
    """Pickle a setting's code by value (cloudpickle, a gymnasium dependency): a lambda
    given to ``env_to_module_connector`` crosses to worker processes as RLlib's does to its
    actors. Unpickling gives back the value itself, not this wrapper. The value is an
    ``object``: only pickled, never called here."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    def __reduce__(self) -> tuple[Any, tuple[bytes]]:
        return cloudpickle.loads, (cloudpickle.dumps(self.value),)


def _make_known_to_tune() -> None:
    """Register ``AlgorithmConfig`` with Tune's interface for config objects if Ray Tune is
    imported, so that a config is a valid ``param_space`` (Tune calls its ``to_dict()``).

    A dict look-up when Tune is not imported. An ABC registration (``_Config.register``)
    changes no class's bases; the first use of an Algorithm class registers it too
    (``algorithm/_tune.py``), for a config made before Tune was imported.
    """
    tune = sys.modules.get("ray.tune.tune")
    configs = getattr(tune, "_Config", None)
    if configs is not None and not issubclass(AlgorithmConfig, configs):
        configs.register(AlgorithmConfig)


def _override_hint(name: str, allowed: list[str]) -> str:
    if name == "num_env_runners":
        return " (set evaluation_num_env_runners instead)"
    if name in ReportingSettings.__struct_fields__:
        return " (a reporting setting: it applies to the whole run)"
    if name in _NOT_OVERRIDABLE:
        return " (an evaluation setting: set it with config.evaluation())"
    close = difflib.get_close_matches(name, allowed, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
