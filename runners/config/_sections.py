"""The config's sections as methods: typed keywords, RLlib's names, one struct each.

``ConfigSections`` is the part of ``AlgorithmConfig`` that says which settings exist: a
method per section whose keywords spell out its struct's fields (``_settings.py``) with
their types, so that editors and mypy check ``config.training(lr=...)``; the attributes
they set, declared for type checkers; and the way data (a config file, ``--set``
overrides, ``params.json``) turns into settings through the same structs.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Literal, Self

from hookbus.kernel import ConfigError

from ._settings import (
    NOT_SET,
    DebuggingSettings,
    EnvironmentSettings,
    EnvRunnersSettings,
    EvaluationSettings,
    FaultToleranceSettings,
    MultiAgentSettings,
    ReportingSettings,
    Settings,
    TrainingSettings,
    check_names,
    convert_section,
    given,
)

__all__ = ("ConfigSections",)


class ConfigSections:
    """Section methods and setting attributes, shared by every algorithm's config."""

    sections: ClassVar[dict[str, type[Settings]]] = {
        "environment": EnvironmentSettings,
        "env_runners": EnvRunnersSettings,
        "training": TrainingSettings,
        "debugging": DebuggingSettings,
        "evaluation": EvaluationSettings,
        "fault_tolerance": FaultToleranceSettings,
        "multi_agent": MultiAgentSettings,
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
    batch_mode: str
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
    num_consecutive_env_runner_failures_tolerance: int
    env_runner_health_probe_timeout_s: float
    env_runner_restore_timeout_s: float
    policies: Any
    policy_mapping_fn: Callable[..., str] | None
    policies_to_train: Any
    logdir: str | None
    tensorboard: bool | None
    _rollout_fragment_length: int | str  # behind the rollout_fragment_length property

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
        batch_mode: Literal["truncate_episodes", "complete_episodes"] = NOT_SET,
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
        ``batch_mode`` (RLlib's): ``"truncate_episodes"`` samples ``rollout_fragment_length``
        steps per sub-env and call, cutting episodes; ``"complete_episodes"`` samples whole
        episodes (each call one per sub-env, from a reset) until the share is reached.
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
        num_consecutive_env_runner_failures_tolerance: int = NOT_SET,
        env_runner_health_probe_timeout_s: float = NOT_SET,
        env_runner_restore_timeout_s: float = NOT_SET,
    ) -> Self:
        """Set how failed EnvRunners are restarted: RLlib's settings (docs/scaling.md).

        ``num_consecutive_env_runner_failures_tolerance`` (RLlib's, default 100): how many
        runner failures in a row, with no sample returned in between, ``train()`` goes on
        after; one more is raised. It also bounds a sub-env's failures in a row under
        ``restart_failed_sub_environments``. ``env_runner_restore_timeout_s`` (RLlib's,
        default 1800): how long a restarted remote runner may take to load the learner's
        weights before the restart counts as failed.
        """
        return self._update("fault_tolerance", given(locals()))

    def multi_agent(
        self,
        *,
        policies: Any = NOT_SET,
        policy_mapping_fn: Callable[..., str] | None = NOT_SET,
        policies_to_train: Any = NOT_SET,
    ) -> Self:
        """Train several policies (modules) in a MultiAgentEnv: RLlib's settings.

        ``policies``: the policy ids (a set or list), or a dict of id to None or
        ``PolicySpec(observation_space=, action_space=)``; spaces not given are taken from
        the first agent that ``policy_mapping_fn`` maps to the policy.
        ``policy_mapping_fn(agent_id, episode, **kwargs) -> policy id``, called once per
        agent and episode (default: every agent to ``default_policy``).
        ``policies_to_train``: the ids to train (default all), or
        ``fn(policy_id, batch) -> bool``.
        """
        return self._update("multi_agent", given(locals()))

    def reporting(
        self, *, logdir: str | os.PathLike[str] | None = NOT_SET, tensorboard: bool | None = NOT_SET
    ) -> Self:
        """Set the run directory ``logdir`` that results are written to (docs/outputs.md).

        With a ``logdir``, the Algorithm's bus gets the output writers: ``params.json``,
        ``result.jsonl``, ``progress.csv``, and TensorBoard files when ``tensorboard`` is
        True (which needs ``hookbus[tensorboard]``) or None and tensorboardX is installed.
        """
        settings = given(locals())
        if settings.get("logdir") is not None:
            settings["logdir"] = os.fspath(settings["logdir"])
        return self._update("reporting", settings)

    def _update(self, section: str, settings: dict[str, Any]) -> Self:
        check_names(section, self.sections[section], settings, "")
        for name, value in settings.items():
            setattr(self, name, value)
        return self

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
