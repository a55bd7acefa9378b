"""Every setting, declared once: its section, name, type, default, check and one line of doc.

A section of ``AlgorithmConfig`` (``environment()``, ``env_runners()``, ``training()``, ...)
is a frozen ``msgspec.Struct`` here; each field is one setting, annotated
``Annotated[type, Setting(doc, check)]`` (``_declarations``: how a setting is declared and
read back). Everything else is derived from these structs: the builder methods' keywords
(``_sections.section``, typed for editors and mypy), the config's attributes,
``validate()``, decoding files, ``--set`` and ``params.json``, the settings table of
docs/settings.md and what worker processes receive (data settings encoded with msgspec;
only settings typed ``Any``, which hold code, are pickled). This module changes when a
setting does; ``_declarations`` when the way settings are declared does.

An algorithm adds settings by subclassing a section (``PPOTrainingSettings``) and changes a
default by declaring the field again with a new default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal

import msgspec

from hookbus.kernel import ConfigError

from .._exploration import check_exploration_config
from ..envs import VECTORIZE_MODES, check_env, resolve_registered_env, vectorize_mode
from ._backend_names import check_backend
from ._checks import (
    Check,
    Rule,
    boolean,
    finite_above,
    int_check,
    is_callable,
    number_above,
    number_at_least,
    number_in,
    one_of,
    optional,
    show,
)
from ._declarations import Setting, Settings
from ._model import MODEL_KEYS, DefaultModelConfig
from ._module_spec import MultiRLModuleSpec, RLModuleSpec

__all__ = (
    "DebuggingSettings",
    "EnvRunnersSettings",
    "EnvironmentSettings",
    "EvaluationSettings",
    "FaultToleranceSettings",
    "MultiAgentSettings",
    "RLModuleSettings",
    "ReportingSettings",
    "TrainingSettings",
)


def _deep_merged(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    merged = dict(old)
    for key, value in new.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merged(merged[key], value)
        else:
            merged[key] = value
    return merged


def _env(name: str, value: object) -> None:
    if value is None:
        raise ConfigError("no env set: call config.environment('CartPole-v1') or similar")
    check_env(value)


# Bounds on what a config (a file, a checkpoint's stored config) may ask to be built:
# generous for a numpy learner on one machine, and finite, so that a hostile or mistyped
# value is refused by validate() instead of starting a million processes or allocating
# terabytes. docs/settings.md shows them.
MAX_RUNNERS = 1024
MAX_SUB_ENVS = 4096
MAX_SEED = 2**32 - 1  # numpy's legacy seeding (np.random.seed), which RLlib calls, takes this


def _model(name: str, value: object) -> None:
    if not isinstance(value, dict):
        also = " or a DefaultModelConfig" if name == "model_config" else ""
        raise ConfigError(f"{name} must be a dict of model settings{also}, got {value!r}")
    DefaultModelConfig.from_dict(value, name=name)


def _learner_class(name: str, value: object) -> None:
    if value is None or callable(value):
        return
    hint = " (a string: import the class and pass it)" if isinstance(value, str) else ""
    raise ConfigError(
        f"learner_class must be None or a learner class, called as learner_class(config, "
        f"observation_space, action_space), got {show(value)}{hint}"
    )


def _exploration(name: str, value: object) -> None:
    if value is not None:
        check_exploration_config(value)


def _vectorize(name: str, value: object) -> None:
    vectorize_mode(value)


_vectorize_check = Rule(
    f"{', '.join(map(repr, VECTORIZE_MODES))} (any case) or a gymnasium.VectorizeMode",
    _vectorize,
)
_env_check = Rule("a registered gymnasium id, an Env subclass or a creator", _env)
_backend_check = Rule("a backend name, its extra installed", lambda _, v: check_backend(v))
_model_check = Rule(f"a dict of {', '.join(MODEL_KEYS)}", _model)
_learner_class_check = Rule("None or a learner class", _learner_class)
_module_spec_check = Check(
    "None, an RLModuleSpec or a MultiRLModuleSpec",
    lambda v: v is None or isinstance(v, RLModuleSpec | MultiRLModuleSpec),
)
_exploration_check = Rule("None, or a known exploration 'type' and its settings", _exploration)


_dict = Check("a dict", lambda v: isinstance(v, dict))
_path = Check("a path or None", lambda v: v is None or isinstance(v, str))
_seed = optional(int_check(0, MAX_SEED), "None or an int in [0, 2**32 - 1]")


class EnvironmentSettings(Settings, frozen=True, kw_only=False):
    """``config.environment(...)``: the env and its config (``env`` may be positional)."""

    @classmethod
    def merge(cls, current: Settings, given: dict[str, Any]) -> dict[str, Any]:
        """Merge a given ``env_config`` into the current one, nested dicts too (RLlib's
        ``deep_update``), so ``environment(env_config={"is_slippery": False})`` keeps the rest;
        a name given to ``register_env`` becomes its creator (``RegisteredEnv``), which
        then ships with the setting to worker processes and Ray actors."""
        new = given.get("env_config")
        if isinstance(new, dict):
            given["env_config"] = _deep_merged(getattr(current, "env_config", {}), new)
        if "env" in given:
            given["env"] = resolve_registered_env(given["env"])
        return given

    env: Annotated[
        Any,
        Setting(
            "an Env class, fn(env_context), an id, 'module:Id|Class' or 'file.py:Class'",
            _env_check,
        ),
    ] = None
    env_config: Annotated[dict[str, Any], Setting("the env's config (EnvContext)", _dict)] = (
        msgspec.field(default_factory=dict)
    )
    env_task_fn: Annotated[
        Any,
        Setting(
            "fn(train_results, task_settable_env, env_context) -> task, after each iteration",
            optional(is_callable, "callable"),
        ),
    ] = None
    is_atari: Annotated[
        bool | None,
        Setting(
            "RLlib's Atari switch; no effect in hookbus (no Atari preprocessing)",
            optional(boolean, "True, False or None"),
        ),
    ] = None


class EnvRunnersSettings(Settings, frozen=True):
    """``config.env_runners(...)``: how many EnvRunners sample, with what, on which backend."""

    renamed: ClassVar[Mapping[str, str]] = {
        "num_rollout_workers": "num_env_runners",
        "num_envs_per_worker": "num_envs_per_env_runner",
    }

    @classmethod
    def merge(cls, current: Settings, given: dict[str, Any]) -> dict[str, Any]:
        """Keep ``gym_env_vectorize_mode`` by its upper-case name (a str, so that it
        encodes and files take it), whichever of RLlib's forms was given."""
        if "gym_env_vectorize_mode" in given:
            given["gym_env_vectorize_mode"] = vectorize_mode(given["gym_env_vectorize_mode"])
        return given

    num_env_runners: Annotated[
        int, Setting("remote EnvRunners (0: sample locally)", int_check(0, MAX_RUNNERS))
    ] = 0
    num_envs_per_env_runner: Annotated[
        int, Setting("sub-envs in each runner's vector env", int_check(1, MAX_SUB_ENVS))
    ] = 1
    gym_env_vectorize_mode: Annotated[
        str,
        Setting(
            "how sub-envs step: in turn, each in its own process, or the env's own vector env",
            _vectorize_check,
        ),
    ] = "SYNC"
    backend: Annotated[
        str, Setting('where runners run: "inline", "process" or "ray"', _backend_check)
    ] = "inline"
    rollout_fragment_length: Annotated[
        int | Literal["auto"],
        Setting(
            'env steps per sub-env and sample() ("auto": train_batch_size split evenly)',
            Check('an int >= 1 or "auto"', lambda v: v == "auto" or int_check(1).test(v)),
        ),
    ] = "auto"
    batch_mode: Annotated[
        Literal["truncate_episodes", "complete_episodes"],
        Setting(
            "truncate_episodes cuts episodes; complete_episodes samples whole ones from a reset",
            one_of("truncate_episodes", "complete_episodes"),
        ),
    ] = "truncate_episodes"
    explore: Annotated[bool, Setting("sample with exploration", boolean)] = True
    exploration_config: Annotated[
        dict[str, Any] | None,
        Setting("{'type': ..., settings} or None: the algorithm's default", _exploration_check),
    ] = None
    metrics_num_episodes_for_smoothing: Annotated[
        int, Setting("episodes the episode metrics are windowed over", int_check(1))
    ] = 100
    sample_timeout_s: Annotated[
        float | None,
        Setting(
            "seconds a remote runner may take for one sample() (None: no limit)",
            optional(number_above(0), "a number > 0 or None"),
        ),
    ] = 60.0
    num_cpus_per_env_runner: Annotated[
        float, Setting("CPUs each Ray actor reserves", number_at_least(0))
    ] = 1
    env_to_module_connector: Annotated[
        Any,
        Setting(
            "fn(env, spaces, device) or fn(env) -> FlattenObservations() (multi-agent: "
            "FlattenObservations(multi_agent=True)), your ObservationPreprocessor, a list of "
            "them or None (None: flatten what is not a Box)",
            optional(is_callable, "a callable fn(env, spaces, device), fn(env) or None"),
            by_value=True,
        ),
    ] = None
    max_requests_in_flight_per_env_runner: Annotated[
        int,
        Setting(
            "foreach_env_runner_async() calls a remote runner may have that were not fetched",
            int_check(1),
        ),
    ] = 1
    create_env_on_local_worker: Annotated[
        bool,
        Setting(
            "RLlib's switch; no effect in hookbus (the local runner always has its env)", boolean
        ),
    ] = False


class TrainingSettings(Settings, frozen=True):
    """``config.training(...)``: the settings every algorithm has."""

    # hookbus has one learner: RLlib's per-learner batch is the whole train batch.
    aliases: ClassVar[Mapping[str, str]] = {"train_batch_size_per_learner": "train_batch_size"}

    lr: Annotated[float, Setting("the optimizer's learning rate", finite_above(0))] = 3e-4
    gamma: Annotated[float, Setting("discount factor", number_in(0, 1))] = 0.99
    train_batch_size: Annotated[
        int, Setting("env steps sampled per training iteration", int_check(1))
    ] = 4000
    model: Annotated[
        dict[str, Any],
        Setting("the MLP, RLlib's old dict form: {'fcnet_hiddens': [sizes], ...}", _model_check),
    ] = msgspec.field(default_factory=lambda: {"fcnet_hiddens": [64, 64]})
    learner_class: Annotated[
        Any, Setting("your own learner class (None: the algorithm's)", _learner_class_check)
    ] = None
    grad_clip_by: Annotated[
        Literal["global_norm"],
        Setting(
            "how grad_clip clips: 'global_norm' (RLlib's default; the only one here)",
            one_of("global_norm"),
        ),
    ] = "global_norm"


class RLModuleSettings(Settings, frozen=True):
    """``config.rl_module(...)``: the default module's shape (RLlib's ``model_config``)."""

    # RLlib 2.40's name of model_config (deprecated there, with this warning).
    renamed: ClassVar[Mapping[str, str]] = {"model_config_dict": "model_config"}

    @classmethod
    def merge(cls, current: Settings, given: dict[str, Any]) -> dict[str, Any]:
        """Keep a ``DefaultModelConfig`` as its dict form (data: files and workers take it)."""
        value = given.get("model_config")
        if isinstance(value, DefaultModelConfig):
            given["model_config"] = value.to_dict()
        return given

    model_config: Annotated[
        dict[str, Any],
        Setting(
            "DefaultModelConfig(...) or its dict: fcnet_hiddens, fcnet_activation, "
            "vf_share_layers (over training(model=...)'s)",
            _model_check,
        ),
    ] = msgspec.field(default_factory=dict)
    rl_module_spec: Annotated[
        Any,
        Setting(
            "RLModuleSpec(...), or MultiRLModuleSpec(rl_module_specs={id: RLModuleSpec}) "
            "for several modules (docs/multi_agent.md)",
            _module_spec_check,
        ),
    ] = None


class DebuggingSettings(Settings, frozen=True):
    """``config.debugging(...)``."""

    seed: Annotated[int | None, Setting("with a seed, runs are reproducible", _seed)] = None
    logger_config: Annotated[
        dict[str, Any] | None,
        Setting(
            "RLlib's logger settings; no effect in hookbus (use reporting(logdir=...))",
            optional(_dict, "a dict or None"),
        ),
    ] = None
    _evaluation_parallel_to_training_wo_thread: Annotated[
        bool,
        Setting(
            "RLlib's debugging switch; no effect in hookbus (parallel evaluation runs as "
            "tasks on the event loop, with no thread pool to leave out)",
            boolean,
        ),
    ] = False


def _auto_or_int(value: object) -> bool:
    return value == "auto" or int_check(1).test(value)


class EvaluationSettings(Settings, frozen=True):
    """``config.evaluation(...)``: RLlib's names and defaults (docs/evaluation.md)."""

    renamed: ClassVar[Mapping[str, str]] = {"evaluation_num_workers": "evaluation_num_env_runners"}

    evaluation_interval: Annotated[
        int | None,
        Setting(
            "evaluate every N train() calls (None or 0: never)",
            optional(int_check(0), "an int >= 0"),
        ),
    ] = None
    evaluation_duration: Annotated[
        int | Literal["auto"],
        Setting(
            'episodes or timesteps per round ("auto": as long as training)',
            Check("an int >= 1 or 'auto'", _auto_or_int),
        ),
    ] = 10
    evaluation_duration_unit: Annotated[
        Literal["episodes", "timesteps"],
        Setting("the unit of evaluation_duration", one_of("episodes", "timesteps")),
    ] = "episodes"
    evaluation_sample_timeout_s: Annotated[
        float, Setting("seconds a round may take", number_above(0))
    ] = 120.0
    evaluation_auto_duration_min_env_steps_per_sample: Annotated[
        int, Setting('"auto" duration: env steps per sample() at least', int_check(1))
    ] = 100
    evaluation_auto_duration_max_env_steps_per_sample: Annotated[
        int, Setting('"auto" duration: env steps per sample() at most', int_check(1))
    ] = 2000
    evaluation_parallel_to_training: Annotated[
        bool, Setting("evaluate while the training step runs", boolean)
    ] = False
    evaluation_config: Annotated[
        dict[str, Any] | None,
        Setting("setting overrides for the evaluation runners", optional(_dict)),
    ] = None
    evaluation_num_env_runners: Annotated[
        int,
        Setting("remote evaluation runners (0: the local one)", int_check(0, MAX_RUNNERS)),
    ] = 0
    custom_evaluation_function: Annotated[
        Any,
        Setting("fn(algorithm, eval_workers) -> metrics", optional(is_callable, "callable")),
    ] = None
    enable_async_evaluation: Annotated[
        bool, Setting("let slow evaluation runners finish in later rounds", boolean)
    ] = False

    def check(self) -> None:
        """``"auto"`` needs parallel evaluation; the auto bounds must be in order."""
        if self.evaluation_duration == "auto" and not self.evaluation_parallel_to_training:
            raise ConfigError(
                "evaluation_duration='auto' needs evaluation_parallel_to_training=True "
                "(it evaluates for as long as the parallel training step takes)"
            )
        low = self.evaluation_auto_duration_min_env_steps_per_sample
        high = self.evaluation_auto_duration_max_env_steps_per_sample
        int_check(low)("evaluation_auto_duration_max_env_steps_per_sample", high)


class FaultToleranceSettings(Settings, frozen=True):
    """``config.fault_tolerance(...)``: RLlib's names and defaults (docs/scaling.md)."""

    restart_failed_env_runners: Annotated[bool, Setting("restart a failed EnvRunner", boolean)] = (
        True
    )
    ignore_env_runner_failures: Annotated[
        bool, Setting("go on without a failed runner (no restart)", boolean)
    ] = False
    max_num_env_runner_restarts: Annotated[
        int, Setting("restarts per runner at most", int_check(0))
    ] = 1000
    delay_between_env_runner_restarts_s: Annotated[
        float, Setting("seconds between a runner's restarts", number_at_least(0))
    ] = 60.0
    restart_failed_sub_environments: Annotated[
        bool, Setting("restart a failed sub-env in place, not the runner", boolean)
    ] = False
    num_consecutive_env_runner_failures_tolerance: Annotated[
        int, Setting("runner (or sub-env) failures in a row before train() raises", int_check(0))
    ] = 100
    env_runner_health_probe_timeout_s: Annotated[
        float, Setting("seconds a health probe may take", number_above(0))
    ] = 30.0
    env_runner_restore_timeout_s: Annotated[
        float, Setting("seconds a restarted runner may take to load the weights", number_above(0))
    ] = 1800.0


class MultiAgentSettings(Settings, frozen=True):
    """``config.multi_agent(...)``: RLlib's names (docs/multi_agent.md).

    ``policies`` None means single-agent, or one ``default_policy`` for a MultiAgentEnv.
    """

    policies: Annotated[Any, Setting("policy ids, or a dict of id to None or PolicySpec")] = None
    policy_mapping_fn: Annotated[
        Any,
        Setting("fn(agent_id, episode, **kwargs) -> policy id", optional(is_callable, "callable")),
    ] = None
    policies_to_train: Annotated[
        Any, Setting("the ids to train (None: all), or fn(policy_id, batch) -> bool")
    ] = None


class ReportingSettings(Settings, frozen=True):
    """``config.reporting(...)``: where results go (docs/outputs.md)."""

    logdir: Annotated[str | None, Setting("the run directory (None: none)", _path)] = None
    tensorboard: Annotated[
        bool | None,
        Setting(
            "write TensorBoard files (None: when tensorboardX is installed)",
            optional(boolean, "True, False or None"),
        ),
    ] = None

    @classmethod
    def merge(cls, current: Settings, given: dict[str, Any]) -> dict[str, Any]:
        """Take a ``logdir`` as any path-like, kept as a str."""
        logdir = given.get("logdir")
        if logdir is not None and not isinstance(logdir, str) and hasattr(logdir, "__fspath__"):
            given["logdir"] = logdir.__fspath__()
        return given
