"""Windowed metrics: RLlib's MetricsLogger and Stats, numpy-backed and mergeable across runners."""

from . import _scalar, _window  # noqa: F401  (importing them registers the kinds of Stats)
from ._logger import MetricsLogger as MetricsLogger
from ._result_keys import *  # noqa: F403  RLlib's names for result keys (their __all__)
from ._result_keys import __all__ as _result_keys
from ._results import results as results
from ._stats import Stats as Stats

__all__ = ("MetricsLogger", "Stats", "results", *_result_keys)

# Public objects report the public module, not the private one they are defined in. The
# other packages share one helper for this (events/_public.py); metrics imports nothing of
# ours (SPEC.md, Layout), so it keeps these four lines.
for _name in __all__:
    _obj = globals()[_name]
    if getattr(_obj, "__module__", "").startswith(__name__ + "._"):
        _obj.__module__ = __name__
del _name, _obj, _result_keys
