"""RLlib's flat config dict: every setting under RLlib's key, the callbacks' keys always there.

RLlib's ``AlgorithmConfig.to_dict()`` is one flat dict of its attributes (``d["lr"]``),
with a few keys renamed (``lambda`` for ``lambda_``, ``callbacks`` for ``callbacks_class``,
``custom_eval_function``, ``create_env_on_driver``; ``rllib/algorithms/algorithm_config.py``,
``to_dict`` and ``_translate_special_keys``). Ray Tune turns a config given as
``param_space`` into that dict, hands each trial its resolved copy (``result.config``) and,
on ``Tuner.restore(path, param_space=config)``, wants the same keys again. So the callbacks
have fixed keys here, whatever is set: ``callbacks`` (the classes, a list), one
``callbacks_<hook>`` per hook (RLlib's ``callbacks_on_train_result``; None when unset) and
one ``callbacks_<option>`` per bus option (``callbacks_on_error``, ...). A per-hook callable
of a user event type adds its own key while it is set.

With no classes set, ``callbacks`` is ``[Callback]``, the base class (it subscribes to
nothing), as RLlib's is its no-op default class: Tune keeps an object of ``param_space`` at
its place in the dict (``callbacks[0]``) and, on ``Tuner.restore(param_space=config)``, puts
in the object the new dict has at that place, or keeps the first run's if there is none.
An empty list there would keep the first run's classes in the restored trials (RLlib's
continue-from-checkpoint example restores after ``callbacks(None)`` to drop a class that
crashes). Read back, the base class is dropped.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from typing import Any

from hookbus.events import HOOKS
from hookbus.kernel import BusOptions, Callback

__all__ = ("RLLIB_KEYS", "callbacks_flat", "from_rllib_keys", "pop_callbacks_keys")

RLLIB_KEYS: Mapping[str, str] = {
    "lambda_": "lambda",
    "custom_evaluation_function": "custom_eval_function",
    "create_env_on_local_worker": "create_env_on_driver",
}
"""Settings whose key in RLlib's dict is another name (a Python keyword, RLlib's old names)."""

_SETTINGS_OF_KEYS = {key: name for name, key in RLLIB_KEYS.items()}
_CLASSES = "callbacks"
_PREFIX = "callbacks_"


def callbacks_flat(
    classes: Iterable[Any], options: BusOptions, per_hook: Mapping[str, list[Any]]
) -> dict[str, Any]:
    """Return ``callbacks(...)``'s arguments under their flat keys, every key always there."""
    flat: dict[str, Any] = {_CLASSES: list(classes) or [Callback]}
    flat.update({_PREFIX + hook: None for hook in HOOKS})
    flat.update({_PREFIX + hook: list(fns) for hook, fns in per_hook.items()})
    flat.update({_PREFIX + name: value for name, value in options.keywords().items()})
    return flat


def pop_callbacks_keys(settings: dict[str, Any]) -> dict[str, Any] | None:
    """Remove the flat callbacks keys from ``settings``; return them as ``callbacks(...)``'s
    keywords (None: there were none). ``callbacks`` is ``callbacks_class``; a hook's None
    means no callables for it."""
    keys = [k for k in settings if k == _CLASSES or k.startswith(_PREFIX)]
    if not keys or (keys == [_CLASSES] and isinstance(settings[_CLASSES], Mapping)):
        return None  # none, or the sectioned view's "callbacks": callbacks(...)'s keywords
    given = {k: settings.pop(k) for k in keys}
    keywords = {k.removeprefix(_PREFIX): v for k, v in given.items() if k != _CLASSES}
    if _CLASSES in given:
        keywords["callbacks_class"] = _without_base(given[_CLASSES])
    return keywords


def _without_base(classes: Any) -> Any:
    """``classes`` without the base ``Callback`` class, which stands for none (see above)."""
    if classes is Callback:
        return []
    if isinstance(classes, list | tuple):
        return [c for c in classes if c is not Callback]
    return classes


def from_rllib_keys(settings: Mapping[str, Any], known: Container[str]) -> dict[str, Any]:
    """Return ``settings`` with RLlib's renamed keys (``lambda``, ...) as hookbus's names,
    those of a setting in ``known``; another stays as given, for the error to name it."""
    renamed = {key: _SETTINGS_OF_KEYS.get(key, key) for key in settings}
    return {
        renamed[key] if renamed[key] in known else key: value for key, value in settings.items()
    }
