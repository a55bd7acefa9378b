"""AlgorithmConfig: RLlib's builder of settings, checked early and named in every error."""

from __future__ import annotations

import copy
import difflib
import math
from collections.abc import Callable
from typing import Any, ClassVar, Generic, Self, TypeVar

from hookbus.kernel import Bus, BusOptions, ConfigError, check_callbacks

from .._exploration import check_exploration_config
from ..backends import check_backend
from ..envs import check_env
from ._checks import (
    DURATION_UNITS,
    check_env_runners,
    check_evaluation,
    check_fault_tolerance,
    int_at_least,
)
from ._multi_agent import check_multi_agent
from ._sections import ConfigSections
from ._settings import EvaluationSettings, ReportingSettings, defaults

__all__ = ("DURATION_UNITS", "AlgorithmConfig")

AlgorithmT = TypeVar("AlgorithmT")

# Settings that evaluation_config cannot override: the evaluation section itself (it steers
# the Algorithm, not the runners) and the evaluation runners' count, which has its own name.
_NOT_OVERRIDABLE = {
    *EvaluationSettings.__struct_fields__,
    *ReportingSettings.__struct_fields__,
    "num_env_runners",
}


class AlgorithmConfig(ConfigSections, Generic[AlgorithmT]):
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
        self._rollout_fragment_length: int | str = "auto"
        for section in self.sections.values():
            for name, default in defaults(section).items():
                setattr(self, name, default)
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
        check_multi_agent(self)
        if self.logdir is not None and not isinstance(self.logdir, str):
            raise ConfigError(f"logdir must be a path or None, got {self.logdir!r}")
        if self.tensorboard not in (None, True, False):
            raise ConfigError(f"tensorboard must be True, False or None, got {self.tensorboard!r}")

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
    if name in ReportingSettings.__struct_fields__:
        return " (a reporting setting: it applies to the whole run)"
    if name in _NOT_OVERRIDABLE:
        return " (an evaluation setting: set it with config.evaluation())"
    close = difflib.get_close_matches(name, allowed, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
