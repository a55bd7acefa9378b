"""Control results: what a handler may ask of the training loop by returning a ``Control``.

Only a few hooks accept one (``CONTROL_HOOKS``): those published between pieces of work,
where "stop", "checkpoint" or "evaluate" can still be acted on. A chain of such a hook
collects its handlers' Controls into one (``merge``): every request is OR-ed, so any stop
wins, and ``requested_by`` keeps, per request, the names of the handlers that made it. A
chain where nobody returns a Control never calls anything here: its result stays None.

A Control is a frozen ``msgspec.Struct``: worker processes and Ray actors send their
handlers' Controls back to the Algorithm as they are, names included.
"""

from __future__ import annotations

from typing import Any

import msgspec

from hookbus.events import HOOKS, event_type, event_types

from ._errors import ConfigError

__all__ = ("CONTROL_HOOKS", "REQUESTS", "Control", "accepts_control", "merge", "refuse")

# The hooks whose handlers may return a Control: their event types say so
# (``accepts_control``), as a type of yours does. They all combine the same way (OR per
# request, ``merge``). ``end_episode`` is acted on only from on_episode_step (the runner
# truncates that episode); elsewhere it is reported like the other requests.
CONTROL_HOOKS = frozenset(hook for hook, cls in HOOKS.items() if cls.accepts_control)

REQUESTS = ("stop_training", "checkpoint", "evaluate", "end_episode")


def accepts_control(hook: str) -> bool:
    """Tell whether handlers of ``hook`` may return a Control: whether its event type says
    so (``accepts_control = True``, a class attribute; the hooks' are ``CONTROL_HOOKS``)."""
    return event_type(hook).accepts_control


class Control(msgspec.Struct, frozen=True):
    """Ask the training loop to stop, checkpoint or evaluate; return it from a handler.

    Return one from a handler of ``on_train_result``, ``on_evaluate_end``,
    ``on_sample_end``, ``on_episode_end`` or ``on_episode_step`` (sync or async).
    ``end_episode`` from an ``on_episode_step`` handler ends that episode at once,
    truncated: ``on_episode_end`` follows (its event says ``ended_early``) and the sub-env
    starts a new episode. ``bus.publish()`` returns the
    chain's combined Control (None if no handler asked for anything): each request is
    OR-ed over the handlers, ``requested_by`` names, per request, the handlers that made
    it, and ``reason`` joins their reasons. ``algo.train()`` reports it as
    ``result["control"]`` (docs/control.md); the loop around ``train()`` acts on it.
    """

    stop_training: bool = False
    checkpoint: bool = False
    evaluate: bool = False
    end_episode: bool = False
    reason: str | None = None
    # Builtins only in the annotations: msgspec resolves them in the module the class
    # reports, which is hookbus.kernel once the package re-exports it.
    requested_by: dict[str, tuple[str, ...]] = msgspec.field(default_factory=dict)
    """Per request (``"stop_training"``, ...), the handlers that asked: filled by the bus."""

    def __hash__(self) -> int:
        # What was asked, not who asked (a dict cannot be hashed): equal Controls hash equal.
        return hash((self.requested, self.reason))

    @property
    def requested(self) -> tuple[str, ...]:
        """Return the names of the requests this Control makes, e.g. ``("stop_training",)``."""
        return tuple(name for name in REQUESTS if getattr(self, name))

    @staticmethod
    def combine(*controls: Control | None) -> Control | None:
        """Return ``controls`` (Nones skipped) as one, as a chain combines its handlers'.

        For Controls the bus returned: each keeps the handler names it has.
        """
        total: Control | None = None
        for control in controls:
            if control is not None:
                total = merge(total, control, "?")
        return total

    def to_result(self) -> dict[str, Any]:
        """Return this Control as plain data, the shape of ``result["control"]``."""
        return {
            **{name: getattr(self, name) for name in REQUESTS},
            "reason": self.reason or "",
            "requested_by": {name: list(who) for name, who in self.requested_by.items()},
        }

    def __repr__(self) -> str:
        asked = ", ".join(
            f"{name} by {' and '.join(self.requested_by.get(name, ())) or '?'}"
            for name in self.requested
        )
        reason = f" ({self.reason})" if self.reason else ""
        return f"Control({asked or 'nothing'}{reason})"


assert set(Control.__struct_fields__) == {*REQUESTS, "reason", "requested_by"}


def merge(total: Control | None, control: Control, name: str) -> Control | None:
    """Return ``total`` with ``control``'s requests added, as made by handler ``name``.

    A Control that asks for nothing leaves ``total`` as it is (None stays None). A Control
    already merged (``requested_by`` filled, say one a publisher passes on) keeps its names.
    """
    asked = control.requested
    if not asked:
        return total
    by: dict[str, tuple[str, ...]] = dict(total.requested_by) if total is not None else {}
    for request in asked:
        who = control.requested_by.get(request) or (name,)
        by[request] = by.get(request, ()) + tuple(n for n in who if n not in by.get(request, ()))
    reasons = [r for r in (total and total.reason, control.reason) if r]
    if len(reasons) == 2 and reasons[1] in reasons[0].split("; "):
        reasons.pop()
    return Control(
        stop_training="stop_training" in by,
        checkpoint="checkpoint" in by,
        evaluate="evaluate" in by,
        end_episode="end_episode" in by,
        reason="; ".join(reasons) or None,
        requested_by=by,
    )


def refuse(hook: str, name: str) -> ConfigError:
    """Return the error for a Control returned by handler ``name`` of ``hook``."""
    accepted = ", ".join(sorted(h for h in event_types() if accepts_control(h)))
    return ConfigError(
        f"handler {name} of hook {hook!r} returned a Control, which {hook!r} does not "
        f"accept; only handlers of {accepted} may return one"
    )
