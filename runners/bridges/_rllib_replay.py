"""RLlib callbacks as they are, replayed: ``from_rllib`` makes them callbacks of a bus.

A bus takes hookbus callbacks; RLlib's ``RLlibCallback`` defines every hook (its old API
stack's with other arguments), so a subclass handed to a bus as it is would be refused. The
bridge (``rllib_callbacks``) adapts one for a live run; this does the same for a replay,
without importing Ray: an item is RLlib's if its class derives from the ``RLlibCallback``
already imported (Ray's, or the stand-in's, ``_rllib_standin_classes``). Only the hooks a class
overrides are called, with the keywords RLlib passes them.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping
from typing import Any

from hookbus.events import HOOKS, BaseEvent

from ._bus import ForeignCallback

__all__ = ("from_rllib", "is_rllib_callback", "rllib_callback_bases")

# What RLlib's new API stack passes each hook it calls (Ray 2.60: the Algorithm's
# make_callback calls and the EnvRunners' _make_on_episode_callback); a replay's bus passes
# these too, plus hookbus's own (event, draft), which RLlib code does not expect.
_EPISODE = ("episode", "env_runner", "metrics_logger", "env", "rl_module", "env_index")
RLLIB_KEYWORDS: dict[str, tuple[str, ...]] = {
    "on_algorithm_init": ("algorithm", "metrics_logger"),
    "on_train_result": ("algorithm", "metrics_logger", "result"),
    "on_evaluate_start": ("algorithm", "metrics_logger"),
    "on_evaluate_end": ("algorithm", "metrics_logger", "evaluation_metrics"),
    "on_evaluate_offline_start": ("algorithm", "metrics_logger"),
    "on_evaluate_offline_end": ("algorithm", "metrics_logger", "evaluation_metrics"),
    "on_env_runners_recreated": (
        "algorithm",
        "env_runner_group",
        "env_runner_indices",
        "is_evaluation",
    ),
    "on_offline_eval_runners_recreated": ("algorithm", "env_runner_group", "env_runner_indices"),
    "on_checkpoint_loaded": ("algorithm",),
    "on_environment_created": ("env_runner", "metrics_logger", "env", "env_context"),
    "on_episode_created": _EPISODE,
    "on_episode_start": _EPISODE,
    "on_episode_step": _EPISODE,
    "on_episode_end": _EPISODE,
    "on_sample_end": ("env_runner", "metrics_logger", "samples"),
}
"""The hooks RLlib's new API stack calls, and the keywords it calls each with."""


def rllib_callback_bases() -> tuple[type, ...]:
    """Return the ``RLlibCallback`` classes imported so far: Ray's and/or the stand-in's."""
    bases = []
    for module in ("ray.rllib.callbacks.callbacks", f"{__package__}._rllib_standin_classes"):
        base = getattr(sys.modules.get(module), "RLlibCallback", None)
        if isinstance(base, type):
            bases.append(base)
    return tuple(bases)


def is_rllib_callback(item: object) -> bool:
    """Tell whether ``item`` is an RLlib callback: a subclass of ``RLlibCallback``, an
    instance of one, or a ``functools.partial`` of such a class."""
    bases = rllib_callback_bases()
    return bool(bases) and issubclass(_class_of(item), bases)


def from_rllib(*callbacks: object) -> list[object]:
    """Return ``callbacks`` as a bus takes them, RLlib's adapted: for ``replay_into``.

    An RLlib callback (an ``RLlibCallback`` subclass, an instance, or a
    ``functools.partial`` of a subclass with its arguments, as RLlib's examples pass them)
    becomes a callback calling only the hooks its class overrides, with RLlib's keywords
    (``prev_episode_chunks=[]`` at ``on_episode_end``: a replay rebuilds whole episodes);
    its ``target`` is the instance. Anything else is returned as it is.
    """
    bases = rllib_callback_bases()
    out: list[object] = []
    for item in callbacks:
        cls = _class_of(item)
        if not bases or not issubclass(cls, bases):
            out.append(item)
            continue
        base = next(b for b in bases if issubclass(cls, b))
        target = item() if isinstance(item, type | functools.partial) else item
        out.append(_adapt(target, _overridden(cls, base)))
    return out


def _class_of(item: object) -> type:
    if isinstance(item, functools.partial) and isinstance(item.func, type):
        return item.func
    return item if isinstance(item, type) else type(item)


def _overridden(cls: type, base: type) -> list[str]:
    hooks = []
    for hook in RLLIB_KEYWORDS:
        method = getattr(cls, hook, None)
        if method is not None and method is not getattr(base, hook, None):
            hooks.append(hook)
    return hooks


def _adapt(target: object, hooks: list[str]) -> ForeignCallback:
    name = type(target).__qualname__
    methods = {hook: _call_as_rllib(name, hook) for hook in hooks if hook in HOOKS}
    adapted: ForeignCallback = type(name, (ForeignCallback,), methods)(target, {})
    return adapted


def _call_as_rllib(name: str, hook: str) -> Any:
    keywords = RLLIB_KEYWORDS[hook]
    ends = hook == "on_episode_end"

    def call(self: ForeignCallback, *, event: BaseEvent, **live: Any) -> Any:
        kwargs = _pick(live, keywords)
        if ends:
            kwargs["prev_episode_chunks"] = []
        return getattr(self.target, hook)(**kwargs)

    call.__name__ = hook
    call.__qualname__ = f"{name}.{hook}"
    return call


def _pick(live: Mapping[str, Any], keywords: tuple[str, ...]) -> dict[str, Any]:
    return {k: live.get(k) for k in keywords}
