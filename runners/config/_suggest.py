"""Which setting a misspelt or foreign keyword meant: the "did you mean" of every builder call.

difflib finds a typo (``lrr`` -> ``lr``) but not another library's name for a setting:
``learning_rate`` and ``lr`` share too few letters. Such names, from Stable-Baselines3's
and plain English, are listed here once, each to RLlib's name; an abbreviation by initials
(``learning_rate`` -> ``lr``) is tried last.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable, Collection
from typing import ParamSpec, TypeVar

__all__ = ("OTHER_NAMES", "close_setting", "did_you_mean", "keyword_hint", "suggests_keywords")

P = ParamSpec("P")
R = TypeVar("R")

OTHER_NAMES: dict[str, str] = {
    "learning_rate": "lr",
    "discount": "gamma",
    "discount_factor": "gamma",
    "gae_lambda": "lambda_",
    "clip_range": "clip_param",
    "ent_coef": "entropy_coeff",
    "vf_coef": "vf_loss_coeff",
    "max_grad_norm": "grad_clip",
    "n_epochs": "num_epochs",
    "n_steps": "rollout_fragment_length",
    "n_envs": "num_envs_per_env_runner",
    "num_envs": "num_envs_per_env_runner",
    "num_workers": "num_env_runners",
}
"""Other libraries' names of settings (SB3's ``learning_rate``), each to RLlib's name."""


def close_setting(key: str, names: Collection[str]) -> str | None:
    """Return the name among ``names`` that ``key`` most likely meant, or None."""
    other = OTHER_NAMES.get(key)
    if other in names:
        return other
    close = difflib.get_close_matches(key, names, n=1)
    if close:
        return close[0]
    initials = "".join(word[:1] for word in key.split("_"))
    return initials if len(initials) > 1 and initials in names else None


def did_you_mean(key: str, names: Collection[str]) -> str:
    """Return `` (did you mean 'name'?)`` for ``close_setting``'s answer, or ``""``."""
    found = close_setting(key, names)
    return f" (did you mean {found!r}?)" if found else ""


def suggests_keywords(method: Callable[P, R]) -> Callable[P, R]:
    """Make an unknown keyword of ``method`` Python's TypeError with the closest name.

    For builder methods with a signature of their own (``learners()``), as the sections'
    builders do; a method that takes ``**kwargs`` takes any keyword and is left alone.
    """
    parameters = inspect.signature(method).parameters
    names = [name for name in parameters if name != "self"]

    @functools.wraps(method)
    def checked(*args: P.args, **kwargs: P.kwargs) -> R:
        for key in kwargs:
            if key not in parameters:
                raise TypeError(
                    f"{method.__name__}() got an unexpected keyword argument {key!r}"
                    f"{did_you_mean(key, names)}"
                )
        return method(*args, **kwargs)

    return checked


def keyword_hint(key: str, section: str, names: Collection[str], section_of: dict[str, str]) -> str:
    """Return the hint for ``key``, unknown to builder ``section()`` (whose settings are
    ``names``): another section's setting of that name, else the closest of this section,
    else the closest of another (``section_of``: each setting's section)."""
    if key in section_of:
        return f" ({key!r} is a {section_of[key]}() setting)"
    found = close_setting(key, names)
    if found is not None:
        return f" (did you mean {found!r}?)"
    other = close_setting(key, section_of)
    if other is not None:
        return f" (did you mean {section_of[other]}({other}=...)?)"
    return ""
