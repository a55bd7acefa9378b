"""Checking settings: one function per config section, each error naming the bad value."""

from __future__ import annotations

from typing import Any

from hookbus.kernel import ConfigError

__all__ = (
    "DURATION_UNITS",
    "check_bool",
    "check_env_runners",
    "check_evaluation",
    "check_fault_tolerance",
    "int_at_least",
    "number_above",
)

DURATION_UNITS = ("episodes", "timesteps")


def check_evaluation(config: Any) -> None:
    """Raise ConfigError naming the first bad evaluation setting."""
    interval = config.evaluation_interval
    if interval is not None:
        int_at_least("evaluation_interval", interval, 0)
    duration = config.evaluation_duration
    if duration == "auto":
        if not config.evaluation_parallel_to_training:
            raise ConfigError(
                "evaluation_duration='auto' needs evaluation_parallel_to_training=True "
                "(it evaluates for as long as the parallel training step takes)"
            )
    elif isinstance(duration, bool) or not isinstance(duration, int) or duration < 1:
        raise ConfigError(f"evaluation_duration must be an int >= 1 or 'auto', got {duration!r}")
    if config.evaluation_duration_unit not in DURATION_UNITS:
        raise ConfigError(
            f"evaluation_duration_unit must be one of "
            f"{', '.join(map(repr, DURATION_UNITS))}, got {config.evaluation_duration_unit!r}"
        )
    number_above("evaluation_sample_timeout_s", config.evaluation_sample_timeout_s, 0)
    low = config.evaluation_auto_duration_min_env_steps_per_sample
    high = config.evaluation_auto_duration_max_env_steps_per_sample
    int_at_least("evaluation_auto_duration_min_env_steps_per_sample", low, 1)
    int_at_least("evaluation_auto_duration_max_env_steps_per_sample", high, low)
    int_at_least("evaluation_num_env_runners", config.evaluation_num_env_runners, 0)
    for name in ("evaluation_parallel_to_training", "enable_async_evaluation"):
        check_bool(name, getattr(config, name))
    function = config.custom_evaluation_function
    if function is not None and not callable(function):
        raise ConfigError(f"custom_evaluation_function must be callable, got {function!r}")
    if config.evaluation_config:  # check the overrides' names and values now, not mid-run
        evaluation = config.get_evaluation_config_object()
        evaluation.evaluation_config = None
        evaluation.validate()


BATCH_MODES = ("truncate_episodes", "complete_episodes")


def check_env_runners(config: Any) -> None:
    """Raise ConfigError naming the first bad remote-runner setting of ``env_runners()``."""
    timeout = config.sample_timeout_s
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0
    ):
        raise ConfigError(f"sample_timeout_s must be a number > 0 or None, got {timeout!r}")
    if config.batch_mode not in BATCH_MODES:
        raise ConfigError(
            f"batch_mode must be one of {', '.join(map(repr, BATCH_MODES))}, "
            f"got {config.batch_mode!r}"
        )
    cpus = config.num_cpus_per_env_runner
    if isinstance(cpus, bool) or not isinstance(cpus, int | float) or not cpus >= 0:
        raise ConfigError(f"num_cpus_per_env_runner must be a number >= 0, got {cpus!r}")


def check_fault_tolerance(config: Any) -> None:
    """Raise ConfigError naming the first bad fault-tolerance setting."""
    for name in (
        "restart_failed_env_runners",
        "ignore_env_runner_failures",
        "restart_failed_sub_environments",
    ):
        check_bool(name, getattr(config, name))
    int_at_least("max_num_env_runner_restarts", config.max_num_env_runner_restarts, 0)
    delay = config.delay_between_env_runner_restarts_s
    if isinstance(delay, bool) or not isinstance(delay, int | float) or not delay >= 0:
        raise ConfigError(
            f"delay_between_env_runner_restarts_s must be a number >= 0, got {delay!r}"
        )
    tolerance = config.num_consecutive_env_runner_failures_tolerance
    int_at_least("num_consecutive_env_runner_failures_tolerance", tolerance, 0)
    probe = config.env_runner_health_probe_timeout_s
    number_above("env_runner_health_probe_timeout_s", probe, 0)
    restore = config.env_runner_restore_timeout_s
    number_above("env_runner_restore_timeout_s", restore, 0)


def int_at_least(name: str, value: object, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigError(f"{name} must be an int >= {low}, got {value!r}")


def number_above(name: str, value: object, low: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > low:
        raise ConfigError(f"{name} must be a number > {low}, got {value!r}")


def check_bool(name: str, value: object) -> None:
    if not isinstance(value, bool):
        raise ConfigError(f"{name} must be True or False, got {value!r}")
