"""AlgorithmConfig: RLlib's builder of settings, checked early and named in every error."""

from __future__ import annotations

import copy
import difflib
import math
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Generic, Literal, Self, TypeVar

from hookbus.kernel import Bus, ConfigError, check_callbacks

from ._builtin import EnvRunnerMetrics
from ._checks import (
    DURATION_UNITS,
    check_env_runners,
    check_evaluation,
    check_fault_tolerance,
    int_at_least,
)
from ._env import check_env
from ._exploration import check_exploration_config
from ._settings import (
    NOT_SET,
    DebuggingSettings,
    EnvironmentSettings,
    EnvRunnersSettings,
    EvaluationSettings,
    FaultToleranceSettings,
    ReportingSettings,
    Settings,
    TrainingSettings,
    check_names,
    convert_section,
    defaults,
    given,
)
from .backends import check_backend

__all__ = ("DURATION_UNITS", "AlgorithmConfig")

AlgorithmT = TypeVar("AlgorithmT")

# Settings that evaluation_config cannot override: the evaluation section itself (it steers
# the Algorithm, not the runners) and the evaluation runners' count, which has its own name.
_NOT_OVERRIDABLE = {
    *EvaluationSettings.__struct_fields__,
    *ReportingSettings.__struct_fields__,
    "num_env_runners",
}


class AlgorithmConfig(Generic[AlgorithmT]):
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
    sections: ClassVar[dict[str, type[Settings]]] = {
        "environment": EnvironmentSettings,
        "env_runners": EnvRunnersSettings,
        "training": TrainingSettings,
        "debugging": DebuggingSettings,
        "evaluation": EvaluationSettings,
        "fault_tolerance": FaultToleranceSettings,
        "reporting": ReportingSettings,
    }
    """Each section's settings: names, types and defaults (see ``_settings``)."""

    # Declared for type checkers; set from the sections in __init__.
    env: Any
    env_config: dict[str, Any]
    env_task_fn: Callable[..., Any] | None
    num_env_runners: int
    num_envs_per_env_runner: int
    backend: str
    explore: bool
    exploration_config: dict[str, Any] | None
    metrics_num_episodes_for_smoothing: int
    sample_timeout_s: float | None
    num_cpus_per_env_runner: float
    lr: float
    gamma: float
    train_batch_size: int
    model: dict[str, Any]
    learner_class: type | None
    seed: int | None
    evaluation_interval: int | None
    evaluation_duration: int | str
    evaluation_duration_unit: str
    evaluation_sample_timeout_s: float
    evaluation_auto_duration_min_env_steps_per_sample: int
    evaluation_auto_duration_max_env_steps_per_sample: int
    evaluation_parallel_to_training: bool
    evaluation_config: dict[str, Any] | None
    evaluation_num_env_runners: int
    custom_evaluation_function: Callable[..., Any] | None
    enable_async_evaluation: bool
    restart_failed_env_runners: bool
    ignore_env_runner_failures: bool
    max_num_env_runner_restarts: int
    delay_between_env_runner_restarts_s: float
    restart_failed_sub_environments: bool
    env_runner_health_probe_timeout_s: float
    logdir: str | None
    tensorboard: bool | None

    def __init__(self) -> None:
        self._rollout_fragment_length: int | str = "auto"
        for section in self.sections.values():
            for name, default in defaults(section).items():
                setattr(self, name, default)
        self.in_evaluation = False
        self.callbacks_class: list[Any] = []
        self.callbacks_per_hook: dict[str, list[Callable[..., Any]]] = {}
        self.on_error = "raise"
        self.plugins: bool | list[str] = False

    # --- the builder ------------------------------------------------------------------------

    def environment(
        self,
        env: Any = NOT_SET,
        *,
        env_config: dict[str, Any] = NOT_SET,
        env_task_fn: Callable[..., Any] | None = NOT_SET,
    ) -> Self:
        """Set ``env`` (a registered id, an Env class or a creator) and ``env_config``.

        ``env_task_fn(train_results, task_settable_env, env_context) -> task`` sets every
        ``TaskSettableEnv`` sub-env's task after each training iteration (curricula).
        """
        return self._update("environment", given(locals()))

    def env_runners(
        self,
        *,
        num_env_runners: int = NOT_SET,
        num_envs_per_env_runner: int = NOT_SET,
        backend: str = NOT_SET,
        rollout_fragment_length: int | Literal["auto"] = NOT_SET,
        explore: bool = NOT_SET,
        exploration_config: dict[str, Any] | None = NOT_SET,
        metrics_num_episodes_for_smoothing: int = NOT_SET,
        sample_timeout_s: float | None = NOT_SET,
        num_cpus_per_env_runner: float = NOT_SET,
    ) -> Self:
        """Set how many EnvRunners sample, with how many envs each, on which backend.

        ``sample_timeout_s`` (RLlib's): how long a remote runner may take for one training
        ``sample()`` before it counts as failed (None: no limit); docs/scaling.md#fault-tolerance.
        ``num_cpus_per_env_runner`` (RLlib's, default 1): the CPUs each Ray actor reserves.
        """
        return self._update("env_runners", given(locals()))

    def training(
        self,
        *,
        lr: float = NOT_SET,
        gamma: float = NOT_SET,
        train_batch_size: int = NOT_SET,
        model: dict[str, Any] = NOT_SET,
        learner_class: type | None = NOT_SET,
    ) -> Self:
        """Set ``lr``, ``gamma``, ``train_batch_size``, ``model`` and ``learner_class``.

        Each algorithm's config adds its own settings (``PPOConfig.training(clip_param=...)``).
        """
        return self._update("training", given(locals()))

    def debugging(self, *, seed: int | None = NOT_SET) -> Self:
        """Set ``seed`` (runs with the same seed and settings are reproducible)."""
        return self._update("debugging", given(locals()))

    def evaluation(
        self,
        *,
        evaluation_interval: int | None = NOT_SET,
        evaluation_duration: int | Literal["auto"] = NOT_SET,
        evaluation_duration_unit: Literal["episodes", "timesteps"] = NOT_SET,
        evaluation_sample_timeout_s: float = NOT_SET,
        evaluation_auto_duration_min_env_steps_per_sample: int = NOT_SET,
        evaluation_auto_duration_max_env_steps_per_sample: int = NOT_SET,
        evaluation_parallel_to_training: bool = NOT_SET,
        evaluation_config: dict[str, Any] | None = NOT_SET,
        evaluation_num_env_runners: int = NOT_SET,
        custom_evaluation_function: Callable[..., Any] | None = NOT_SET,
        enable_async_evaluation: bool = NOT_SET,
    ) -> Self:
        """Set when and how long to evaluate: RLlib's settings (docs/evaluation.md)."""
        return self._update("evaluation", given(locals()))

    def fault_tolerance(
        self,
        *,
        restart_failed_env_runners: bool = NOT_SET,
        ignore_env_runner_failures: bool = NOT_SET,
        max_num_env_runner_restarts: int = NOT_SET,
        delay_between_env_runner_restarts_s: float = NOT_SET,
        restart_failed_sub_environments: bool = NOT_SET,
        env_runner_health_probe_timeout_s: float = NOT_SET,
    ) -> Self:
        """Set how failed EnvRunners are restarted: RLlib's settings (docs/scaling.md)."""
        return self._update("fault_tolerance", given(locals()))

    def reporting(
        self, *, logdir: str | None = NOT_SET, tensorboard: bool | None = NOT_SET
    ) -> Self:
        """Set the run directory ``logdir`` that results are written to (docs/outputs.md).

        With a ``logdir``, the Algorithm's bus gets the output writers: ``params.json``,
        ``result.jsonl``, ``progress.csv``, and TensorBoard files when ``tensorboard`` is
        True (which needs ``hookbus[tensorboard]``) or None and tensorboardX is installed.
        """
        return self._update("reporting", given(locals()))

    def callbacks(
        self,
        callbacks_class: Any = None,
        *,
        on_error: str = "raise",
        plugins: bool | list[str] = False,
        **hook_callables: Any,
    ) -> Self:
        """Set the callback classes (or instances) and per-hook callables, as ``Bus(...)`` takes.

        Each call replaces what an earlier one set. Everything is checked here, as the bus
        would check it (hook names, handler signatures, classes, ``on_error``, plugin names):
        a bad value raises ConfigError now, not at ``build()`` or at its first event.
        """
        check_callbacks(callbacks_class, on_error=on_error, plugins=plugins, **hook_callables)
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
        self.on_error = on_error
        self.plugins = plugins
        return self

    def _update(self, section: str, settings: dict[str, Any]) -> Self:
        check_names(section, self.sections[section], settings, "")
        for name, value in settings.items():
            setattr(self, name, value)
        return self

    # --- derived settings -------------------------------------------------------------------

    @property
    def rollout_fragment_length(self) -> int:
        """Env steps per sub-env per ``sample()``; "auto" splits ``train_batch_size`` evenly."""
        value = self._rollout_fragment_length
        if value == "auto":
            runners = max(1, self.num_env_runners) * self.num_envs_per_env_runner
            return max(1, math.ceil(self.train_batch_size / runners))
        return int(value)

    @rollout_fragment_length.setter
    def rollout_fragment_length(self, value: int | str) -> None:
        self._rollout_fragment_length = value

    @property
    def exploration(self) -> dict[str, Any]:
        """The exploration settings in force: ``exploration_config`` or the default."""
        return dict(self.exploration_config or self.default_exploration_config)

    def copy(self) -> Self:
        """Return an independent copy (callback instances and functions are shared)."""
        new = copy.copy(self)
        for name in self._setting_names():
            value = getattr(self, name)
            if isinstance(value, dict | list):
                setattr(new, name, copy.deepcopy(value))
        new.callbacks_class = list(self.callbacks_class)
        new.callbacks_per_hook = {k: list(v) for k, v in self.callbacks_per_hook.items()}
        return new

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
        allowed = [name for name in self._setting_names() if name not in _NOT_OVERRIDABLE]
        unknown = [name for name in overrides if name not in allowed]
        if unknown:
            named = ", ".join(f"{name!r}{_override_hint(name, allowed)}" for name in unknown)
            raise ConfigError(
                f"evaluation_config cannot override {named}; allowed: {', '.join(allowed)}"
            )
        config = self.copy()
        for name, value in overrides.items():
            setattr(config, name, copy.deepcopy(value))
        config.num_env_runners = self.evaluation_num_env_runners
        config.in_evaluation = True
        return config

    def to_dict(self) -> dict[str, Any]:
        """Return the settings by section (values as set; callables as they are)."""
        return {
            section: {
                name: self._rollout_fragment_length
                if name == "rollout_fragment_length"
                else getattr(self, name)
                for name in settings.__struct_fields__
            }
            for section, settings in self.sections.items()
        }

    def update_from_dict(self, settings: Mapping[str, Any], *, where: str = "") -> Self:
        """Set settings from data: ``{"training": {"lr": 1e-3}}`` or flat ``{"lr": 1e-3}``.

        Values are decoded through the sections' types, as a config file's are: a name no
        section has, or a value of the wrong type, is a ConfigError naming it (prefixed with
        ``where``, e.g. the file). ``"training.lr"`` names a setting with its section.
        """
        by_section: dict[str, dict[str, Any]] = {}
        for key, value in settings.items():
            section, name = self._locate(key, value, where)
            if name is None:
                if not isinstance(value, Mapping):
                    prefix = f"{where}: " if where else ""
                    raise ConfigError(
                        f"{prefix}section {section!r} must be a table of settings, got {value!r}"
                    )
                by_section.setdefault(section, {}).update(value)
            else:
                by_section.setdefault(section, {})[name] = value
        for section, values in by_section.items():
            # Through the section's method: it may merge (DQN's replay_buffer_config).
            getattr(self, section)(
                **convert_section(section, self.sections[section], values, where)
            )
        return self

    def _locate(self, key: str, value: Any, where: str) -> tuple[str, str | None]:
        """Return (section, setting) for a key of ``update_from_dict``; setting None: a table."""
        if key in self.sections:
            return key, None
        section, dot, name = key.rpartition(".")
        if dot and section in self.sections:
            return section, name
        for section, fields in self.sections.items():
            if key in fields.__struct_fields__:
                return section, key
        allowed = [*self.sections, *self._setting_names()]
        close = difflib.get_close_matches(key, allowed, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        prefix = f"{where}: " if where else ""
        raise ConfigError(
            f"{prefix}unknown setting {key!r}{hint}; a section ({', '.join(self.sections)}) "
            f"or a setting of one"
        )

    def _setting_names(self) -> list[str]:
        return [name for s in self.sections.values() for name in s.__struct_fields__]

    # --- RLlib's switches, with hookbus's one setting each ----------------------------------

    def api_stack(
        self,
        enable_rl_module_and_learner: bool | None = None,
        enable_env_runner_and_connector_v2: bool | None = None,
    ) -> Self:
        """Accept RLlib's new API stack (EnvRunners, Learners): the only one hookbus has."""
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
        """Raise ConfigError naming the first bad setting and what it allows."""
        if self.env is None:
            raise ConfigError("no env set: call config.environment('CartPole-v1') or similar")
        check_env(self.env)
        int_at_least("num_env_runners", self.num_env_runners, 0)
        int_at_least("num_envs_per_env_runner", self.num_envs_per_env_runner, 1)
        int_at_least("train_batch_size", self.train_batch_size, 1)
        int_at_least(
            "metrics_num_episodes_for_smoothing", self.metrics_num_episodes_for_smoothing, 1
        )
        if self._rollout_fragment_length != "auto":
            int_at_least("rollout_fragment_length", self._rollout_fragment_length, 1)
        check_backend(self.backend)
        check_env_runners(self)
        if not isinstance(self.lr, int | float) or not 0 < self.lr < math.inf:
            raise ConfigError(f"lr must be a finite number > 0, got {self.lr!r}")
        if not isinstance(self.gamma, int | float) or not 0 <= self.gamma <= 1:
            raise ConfigError(f"gamma must be a number in [0, 1], got {self.gamma!r}")
        if self.seed is not None and (
            isinstance(self.seed, bool) or not isinstance(self.seed, int)
        ):
            raise ConfigError(f"seed must be an int or None, got {self.seed!r}")
        if not isinstance(self.env_config, dict):
            raise ConfigError(f"env_config must be a dict, got {self.env_config!r}")
        if not isinstance(self.explore, bool):
            raise ConfigError(f"explore must be True or False, got {self.explore!r}")
        check_exploration_config(self.exploration)
        if self.env_task_fn is not None and not callable(self.env_task_fn):
            raise ConfigError(f"env_task_fn must be callable, got {self.env_task_fn!r}")
        hiddens = self.model.get("fcnet_hiddens") if isinstance(self.model, dict) else None
        if not hiddens or not all(isinstance(h, int) and h >= 1 for h in hiddens):
            raise ConfigError(
                f"model['fcnet_hiddens'] must be a non-empty list of positive ints, "
                f"got {self.model!r}"
            )
        check_evaluation(self)
        check_fault_tolerance(self)

    def make_bus(self, bus: Bus | None = None, *, observers: bool = True) -> Bus:
        """Return a bus with this config's callbacks and the built-in runner metrics.

        A new bus, or ``bus`` (a shared one) with them added. ``observers=False`` leaves the
        observer classes out: a worker process's bus, whose events observers see on the
        Algorithm's bus.
        """
        classes = self.callbacks_class
        if not observers:
            classes = [c for c in classes if not getattr(c, "observer", False)]
        if bus is None:
            bus = Bus(
                classes, on_error=self.on_error, plugins=self.plugins, **self.callbacks_per_hook
            )
        else:
            if self.on_error != bus.on_error:
                raise ConfigError(
                    f"on_error={self.on_error!r} in config.callbacks() differs from the "
                    f"shared bus's {bus.on_error!r}; set it on the Bus"
                )
            bus.add_callbacks(classes, **self.callbacks_per_hook)
        if not any(isinstance(cb, EnvRunnerMetrics) for cb in bus.callbacks):
            bus.add_callbacks(EnvRunnerMetrics())
        return bus

    def build(self, bus: Bus | None = None) -> AlgorithmT:
        """Check the settings and build the Algorithm (sharing ``bus`` if given).

        Outside an event loop the Algorithm is also set up before this returns (its envs
        made, ``on_algorithm_init`` published), ready for ``train()``. Inside one, it is only
        constructed: ``async with config.build() as algo`` sets it up.
        """
        if self.algo_class is None:
            raise ConfigError(
                f"{type(self).__name__} names no algorithm; use PPOConfig() or DQNConfig()"
            )
        self.validate()
        algorithm: AlgorithmT = self.algo_class(self.copy(), bus=bus)
        return algorithm

    def __repr__(self) -> str:
        return f"{type(self).__name__}(env={self.env!r}, backend={self.backend!r})"


def _override_hint(name: str, allowed: list[str]) -> str:
    if name == "num_env_runners":
        return " (set evaluation_num_env_runners instead)"
    if name in _NOT_OVERRIDABLE:
        return " (an evaluation setting: set it with config.evaluation())"
    close = difflib.get_close_matches(name, allowed, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
