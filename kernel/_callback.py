"""The base class of stateful class handlers (RLlib's ``RLlibCallback``)."""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Collection, Iterable, Sequence
from typing import Any, ClassVar

from hookbus.events import HOOKS, event_types

from ._errors import ConfigError, HookbusWarning, user_stacklevel

__all__ = ("Callback", "instantiate", "overridden_hooks", "warn_stray_hooks")


class Callback:
    """Subclass and override the hooks you need; each may be ``def`` or ``async def``.

    Every hook receives keyword arguments only (the base's ``*args`` only keeps type
    checkers happy with keyword-only overrides): ``event`` (the typed event) and the hook's
    live objects (SPEC.md's table); accept ``**kwargs`` so that new arguments never break
    you. A hook you do not override costs nothing: the class is not in that hook's chain.

    ``observer = True`` marks a class that watches every runner's events from the
    Algorithm's bus (a recorder, a tracer) rather than running where events happen.
    ``before`` / ``after`` / ``priority`` move its handlers within their chains;
    ``on_error`` sets their error policy (``"log"``, ...) and ``deadline`` their time limit,
    overriding the bus's.
    ``get_state()`` / ``set_state()`` make the instance's state part of checkpoints;
    ``close()`` runs when the bus closes.
    """

    observer: ClassVar[bool] = False
    before: ClassVar[Sequence[Any]] = ()
    """Run this class's handlers before these (handler names, Callback classes)."""
    after: ClassVar[Sequence[Any]] = ()
    """Run this class's handlers after these."""
    priority: ClassVar[int] = 0
    """Among handlers free to run, a higher priority runs earlier (docs/subscribing.md)."""
    on_error: ClassVar[str | None] = None
    """This class's error policy, overriding the bus's (None: the bus's; docs/errors.md)."""
    deadline: ClassVar[float | None] = None
    """Seconds each of its handlers may take (None: the bus's); async ones are cancelled."""

    def get_state(self) -> dict[str, Any] | None:
        """Return state to save in checkpoints (plain data and numpy arrays), or None."""
        return None

    def set_state(self, state: dict[str, Any]) -> None:
        """Restore what ``get_state()`` returned."""

    def close(self) -> None:
        """Release resources (files, connections); called once when the bus closes."""

    def wanted_hooks(self) -> Collection[str] | None:
        """Return the hooks to subscribe to among those overridden, or None for all of them."""
        return None

    # The hooks, as no-ops. Overriding one puts this class in that hook's chain.

    def on_algorithm_init(self, *args: Any, **kwargs: Any) -> Any:
        """Handle the end of the Algorithm's setup."""

    def on_train_result(self, *args: Any, **kwargs: Any) -> Any:
        """Handle a training iteration's result; keys added to ``result`` are returned."""

    def on_evaluate_start(self, *args: Any, **kwargs: Any) -> Any:
        """Handle the start of an evaluation round."""

    def on_evaluate_end(self, *args: Any, **kwargs: Any) -> Any:
        """Handle the end of an evaluation round; ``evaluation_metrics`` may be edited."""

    def on_checkpoint_loaded(self, *args: Any, **kwargs: Any) -> Any:
        """Handle an Algorithm restored from a checkpoint."""

    def on_env_runners_recreated(self, *args: Any, **kwargs: Any) -> Any:
        """Handle failed EnvRunners being restarted."""

    def on_learner_update_start(self, *args: Any, **kwargs: Any) -> Any:
        """Handle the start of a learner update; changes to the learner (``lr``) apply to it."""

    def on_learner_update_end(self, *args: Any, **kwargs: Any) -> Any:
        """Handle the end of a learner update; its stats are in ``event.stats``."""

    def on_environment_created(self, *args: Any, **kwargs: Any) -> Any:
        """Handle an EnvRunner's new (vector) environment."""

    def on_episode_created(self, *args: Any, **kwargs: Any) -> Any:
        """Handle a new episode, before its sub-env is reset."""

    def on_episode_start(self, *args: Any, **kwargs: Any) -> Any:
        """Handle an episode's first observation."""

    def on_episode_step(self, *args: Any, **kwargs: Any) -> Any:
        """Handle an env step, once it is in the episode; the step that ends it included.

        An episode of N steps calls this N times (as RLlib does). On the last call the
        episode is already ``is_terminated`` or ``is_truncated``; ``on_episode_end`` follows.
        """

    def on_episode_end(self, *args: Any, **kwargs: Any) -> Any:
        """Handle a finished episode (terminated or truncated), after its last step's call."""

    def on_sample_end(self, *args: Any, **kwargs: Any) -> Any:
        """Handle the end of a ``sample()`` call."""

    def on_postprocess_trajectory(self, *args: Any, **kwargs: Any) -> Any:
        """Handle a finished episode before it goes to the learner (rewards may change)."""


def overridden_hooks(callback: object) -> list[str]:
    """Return the hooks ``callback`` (an instance) implements, in SPEC.md's order, then
    those of your event types in the order they were defined.

    For a ``Callback`` subclass, a hook counts only if the class overrides the no-op; for any
    other object, every hook-named callable attribute counts (duck typing). A hook of your
    own counts also as an instance's attribute (a Recorder recording your events).
    ``wanted_hooks()`` narrows that down (a Recorder of chosen hooks).
    """
    cls = type(callback)
    wanted_hooks = getattr(callback, "wanted_hooks", None)
    wanted = wanted_hooks() if callable(wanted_hooks) else None
    hooks = []
    for hook in event_types():
        method = getattr(cls if hook in HOOKS else callback, hook, None)
        if method is None or method is getattr(Callback, hook, None):
            continue
        if callable(method) and (wanted is None or hook in wanted):
            hooks.append(hook)
    return hooks


def instantiate(items: Iterable[object]) -> list[object]:
    """Turn callback classes (checked already) into instances; instances pass through."""
    instances = []
    for item in items:
        if isinstance(item, type):
            try:
                item = item()
            except TypeError as exc:
                raise ConfigError(
                    f"cannot instantiate callback class {item.__qualname__} with no arguments "
                    f"({exc}); pass an instance instead"
                ) from exc
            # A class's hooks were checked unbound; an instance may add its own attributes.
        instances.append(item)
    return instances


def warn_stray_hooks(callback: object) -> None:
    """Warn about ``on_*`` methods that look like misspelt hooks (they would never run)."""
    known = event_types()
    for name in dir(type(callback)):
        if name.startswith("on_") and name not in known and callable(getattr(callback, name)):
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            warnings.warn(
                f"{type(callback).__qualname__}.{name} is not a hook and will never be "
                f"called{hint}",
                HookbusWarning,
                stacklevel=user_stacklevel(),
            )
