"""What each hook hands its handlers besides ``event``: the live-argument table of SPEC.md."""

from __future__ import annotations

import difflib

from hookbus.events import HOOKS, BaseEvent

from ._errors import ConfigError

__all__ = ("LIVE_ARGS", "OPTIONAL_LIVE_ARGS", "event_type_for", "hook_name")

_EPISODE_ARGS = ("episode", "env_runner", "metrics_logger", "env", "rl_module", "env_index")

_LEARNER_ARGS = ("algorithm", "learner", "module", "batch", "metrics_logger")

LIVE_ARGS: dict[str, tuple[str, ...]] = {
    "on_algorithm_init": ("algorithm", "metrics_logger"),
    "on_train_result": ("algorithm", "metrics_logger", "result", "draft"),
    "on_evaluate_start": ("algorithm", "metrics_logger"),
    "on_evaluate_end": ("algorithm", "metrics_logger", "evaluation_metrics"),
    "on_checkpoint_loaded": ("algorithm", "metrics_logger"),
    "on_env_runners_recreated": (
        "algorithm",
        "env_runner_group",
        "env_runner_indices",
        "is_evaluation",
    ),
    "on_learner_update_start": _LEARNER_ARGS,
    "on_learner_update_end": _LEARNER_ARGS,
    "on_environment_created": ("env_runner", "metrics_logger", "env", "env_context"),
    "on_episode_created": _EPISODE_ARGS,
    "on_episode_start": _EPISODE_ARGS,
    "on_episode_step": _EPISODE_ARGS,
    "on_episode_end": _EPISODE_ARGS,
    "on_sample_end": ("env_runner", "metrics_logger", "samples"),
    "on_postprocess_trajectory": ("episode", "env_runner", "metrics_logger"),
}
"""Hook name to the keyword arguments (besides ``event``) its handlers receive, in order."""

OPTIONAL_LIVE_ARGS = frozenset({"draft"})
"""Live arguments added after SPEC.md's table: a handler gets one only if it names it or
takes ``**kwargs``, so a handler that names every other argument of its hook (and has no
``**kwargs``) keeps working when one is added."""

assert LIVE_ARGS.keys() == HOOKS.keys(), "every hook needs its live arguments"


def hook_name(name: str) -> str:
    """Return ``name`` if it is a hook, else raise ConfigError suggesting the closest one."""
    if name in HOOKS:
        return name
    close = difflib.get_close_matches(name, HOOKS, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ConfigError(f"unknown hook {name!r}{hint}; known hooks: {', '.join(HOOKS)}")


def event_type_for(key: object) -> type[BaseEvent]:
    """Return the event type for an event type or a hook name, or raise ConfigError."""
    if isinstance(key, str):
        return HOOKS[hook_name(key)]
    if isinstance(key, type) and key in HOOKS.values():
        return key
    names = ", ".join(cls.__name__ for cls in HOOKS.values())
    raise ConfigError(f"{key!r} is not a hookbus event type; use one of {names} or a hook name")
