"""The config's sections as typed structs: RLlib's names, types and defaults, in one place.

Each section of ``AlgorithmConfig`` (``environment()``, ``env_runners()``, ``training()``,
...) is a ``msgspec.Struct`` here. The struct is what a section *is*: the names a section
method accepts, their defaults, and the types that a config file, a ``--set`` override and
``params.json`` decode and encode through. The section methods spell the same names out as
typed keyword parameters, so that editors and mypy check user code;
``tests/runners/test_settings.py`` keeps the two in step.

Settings that hold code (an env creator, ``env_task_fn``, a learner class) are typed
``Any`` here: a file can only name data, and ``validate()`` checks what they hold.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any, Literal

import msgspec

from hookbus.kernel import ConfigError

__all__ = (
    "NOT_SET",
    "DebuggingSettings",
    "EnvRunnersSettings",
    "EnvironmentSettings",
    "EvaluationSettings",
    "FaultToleranceSettings",
    "MultiAgentSettings",
    "ReportingSettings",
    "Settings",
    "TrainingSettings",
    "convert_section",
    "defaults",
    "given",
)


class _NotSet:
    def __repr__(self) -> str:
        return "NOT_SET"


NOT_SET: Any = _NotSet()
"""The default of every section method's parameters: "leave this setting as it is".

Typed ``Any`` so that a parameter reads ``lr: float = NOT_SET`` (its real type) to mypy and
editors, as RLlib's ``NotProvided`` does."""


class Settings(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One section of a config: every field a setting, with its type and default."""


class EnvironmentSettings(Settings):
    """``config.environment(...)``."""

    env: Any = None
    env_config: dict[str, Any] = {}
    env_task_fn: Any = None


class EnvRunnersSettings(Settings):
    """``config.env_runners(...)``."""

    num_env_runners: int = 0
    num_envs_per_env_runner: int = 1
    backend: str = "inline"
    rollout_fragment_length: int | Literal["auto"] = "auto"
    batch_mode: Literal["truncate_episodes", "complete_episodes"] = "truncate_episodes"
    explore: bool = True
    exploration_config: dict[str, Any] | None = None
    metrics_num_episodes_for_smoothing: int = 100
    sample_timeout_s: float | None = 60.0
    num_cpus_per_env_runner: float = 1


class TrainingSettings(Settings):
    """``config.training(...)``: the settings every algorithm has."""

    lr: float = 3e-4
    gamma: float = 0.99
    train_batch_size: int = 4000
    model: dict[str, Any] = msgspec.field(default_factory=lambda: {"fcnet_hiddens": [64, 64]})
    learner_class: Any = None


class DebuggingSettings(Settings):
    """``config.debugging(...)``."""

    seed: int | None = None


class EvaluationSettings(Settings):
    """``config.evaluation(...)``: RLlib's names and defaults (docs/evaluation.md)."""

    evaluation_interval: int | None = None
    evaluation_duration: int | Literal["auto"] = 10
    evaluation_duration_unit: Literal["episodes", "timesteps"] = "episodes"
    evaluation_sample_timeout_s: float = 120.0
    evaluation_auto_duration_min_env_steps_per_sample: int = 100
    evaluation_auto_duration_max_env_steps_per_sample: int = 2000
    evaluation_parallel_to_training: bool = False
    evaluation_config: dict[str, Any] | None = None
    evaluation_num_env_runners: int = 0
    custom_evaluation_function: Any = None
    enable_async_evaluation: bool = False


class FaultToleranceSettings(Settings):
    """``config.fault_tolerance(...)``: RLlib's names and defaults (docs/scaling.md)."""

    restart_failed_env_runners: bool = True
    ignore_env_runner_failures: bool = False
    max_num_env_runner_restarts: int = 1000
    delay_between_env_runner_restarts_s: float = 60.0
    restart_failed_sub_environments: bool = False
    num_consecutive_env_runner_failures_tolerance: int = 100
    env_runner_health_probe_timeout_s: float = 30.0
    env_runner_restore_timeout_s: float = 1800.0


class MultiAgentSettings(Settings):
    """``config.multi_agent(...)``: RLlib's names (docs/multi_agent.md).

    ``policies`` None means single-agent, or one ``default_policy`` for a MultiAgentEnv.
    """

    policies: Any = None
    policy_mapping_fn: Any = None
    policies_to_train: Any = None


class ReportingSettings(Settings):
    """``config.reporting(...)``: where results go (docs/outputs.md)."""

    logdir: str | None = None
    tensorboard: bool | None = None


def defaults(section: type[Settings]) -> dict[str, Any]:
    """Return a fresh dict of ``section``'s settings and their defaults (copies, not shared)."""
    instance = section()
    return {name: getattr(instance, name) for name in section.__struct_fields__}


def given(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """Keep the section method's arguments that were given (``locals()`` minus self)."""
    return {k: v for k, v in arguments.items() if k != "self" and v is not NOT_SET}


def convert_section(
    name: str, section: type[Settings], values: Mapping[str, Any], where: str = ""
) -> dict[str, Any]:
    """Decode ``values`` (data from a file or the command line) as settings of ``section``.

    Returns the given settings only, converted to their types (a TOML integer for a float
    setting becomes a float). An unknown name or a value of the wrong type is a ConfigError
    naming it, prefixed by ``where`` (a file name, an option).
    """
    prefix = f"{where}: " if where else ""
    if not isinstance(values, Mapping):
        raise ConfigError(f"{prefix}section {name!r} must be a table of settings, got {values!r}")
    check_names(name, section, values, prefix)
    try:
        # Lax: a string "inf" (params.json's infinity) or "0.001" decodes as a float.
        converted = msgspec.convert(dict(values), section, strict=False)
    except msgspec.ValidationError as exc:
        message, _, path = str(exc).partition(" - at `$.")
        setting = path.rstrip("`")
        raise ConfigError(f"{prefix}{name}.{setting}: {message[:1].lower()}{message[1:]}") from None
    return {key: getattr(converted, key) for key in values}


def check_names(name: str, section: type[Settings], values: Mapping[str, Any], prefix: str) -> None:
    """Raise ConfigError for the first name that is not one of ``section``'s settings."""
    allowed = section.__struct_fields__
    for key in values:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(
                f"{prefix}unknown {name}() setting {key!r}{hint}; allowed: {', '.join(allowed)}"
            )
