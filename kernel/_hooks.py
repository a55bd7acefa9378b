"""What each hook hands its handlers besides ``event``: the live-argument table of SPEC.md.

An event type of yours names its own (``live_args``, a class attribute; none by default).
"""

from __future__ import annotations

from hookbus.events import HOOKS, BaseEvent, event_type

__all__ = ("LIVE_ARGS", "OPTIONAL_LIVE_ARGS", "event_type_for", "hook_name", "live_args_of")

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
    """Return ``name`` if it is a hook (yours included), else raise ConfigError saying why."""
    return event_type(name).hook


def event_type_for(key: object) -> type[BaseEvent]:
    """Return the event type for an event type or a hook name, or raise ConfigError."""
    return event_type(key)


def live_args_of(hook: str) -> tuple[str, ...]:
    """Return the live arguments (besides ``event``) that handlers of ``hook`` receive.

    The hooks' are ``LIVE_ARGS``; an event type of yours declares its own as the class
    attribute ``live_args`` (none by default).
    """
    live = LIVE_ARGS.get(hook)
    if live is not None:
        return live
    declared: tuple[str, ...] = getattr(event_type(hook), "live_args", ())
    return declared
