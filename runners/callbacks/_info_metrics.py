"""``InfoMetrics``: what an env already reports in its infos, logged as metrics in one line.

At each episode's end the callback reads the episode's last info (the final step's:
``episode.get_infos(-1)``, which hookbus's episodes, RLlib's and the SB3 bridge's all
have) and logs the named keys through the hook's ``metrics_logger`` with
``log_value(name, value, reduce=..., window=...)``, the one call every logger it meets
takes (hookbus's own, RLlib's in the RLlib bridge). The spec is checked whole when the
callback is made, so a typo in a reduction fails before any training.
"""

from __future__ import annotations

import numbers
import reprlib
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hookbus.kernel import Callback, ConfigError, HookbusWarning

__all__ = ("MISSING_KEY", "REDUCTIONS", "InfoMetrics")

REDUCTIONS = ("mean", "min", "max", "sum")
"""The reductions a key may ask for: those that take a window in every logger."""

MISSING_KEY = "info_missing"
"""The parent of the counts of episodes whose last info lacked a key (``info_missing/<key>``)."""

# Without a window, "mean" and "sum" take the names that mean the same in hookbus's
# logger and in RLlib 2.60's: an EMA (coefficient 0.01) and a running total. (RLlib 2.60
# turns an unwindowed "sum" into a per-iteration one and refuses an unwindowed "mean".)
_UNWINDOWED = {"mean": "ema", "sum": "lifetime_sum", "min": "min", "max": "max"}

# One metric: (its name in the results, the reduction given to log_value).
_Output = tuple[str, str]


class InfoMetrics(Callback):
    """Log keys of each episode's last info as metrics, at the episode's end.

    ``spec`` maps an info key to one reduction (``"mean"``, ``"min"``, ``"max"`` or
    ``"sum"``), logged under the key's own name, or to a list of them, each logged as
    ``<key>_<reduction>``: ``InfoMetrics({"is_success": "mean", "x_position": ["min",
    "max"]})`` logs ``is_success``, ``x_position_min`` and ``x_position_max``. Each is
    reduced over the last ``window`` episodes (None: no window, see docs/metrics.md).

    A value must be a number: an int, float or bool, a numpy number or bool, or a numpy
    array of one element; anything else raises ``ConfigError`` naming the key and type.
    A key missing from an episode's last info is skipped for that episode and counted,
    in ``missing[key]`` and as the metric ``info_missing/<key>`` (a lifetime sum, so the
    count reaches the results from every runner); the first miss of each key warns
    (``HookbusWarning``), once per instance. A multi-agent episode gives one last info
    per agent (``episode.agent_episodes``): each agent's value is logged, in the order
    agents joined, and a key counts as missing only if no agent's info has it.
    """

    def __init__(self, spec: Mapping[str, str | Sequence[str]], *, window: int | None = 100):
        super().__init__()
        self.window = _checked_window(window)
        self._plan = _checked_plan(spec, self.window)
        self.spec: dict[str, str | tuple[str, ...]] = {
            key: value if isinstance(value, str) else tuple(value) for key, value in spec.items()
        }
        """The spec as given (lists as tuples)."""
        self.missing: dict[str, int] = dict.fromkeys(self.spec, 0)
        """Per info key, how many episodes' last infos lacked it."""
        self._warned: set[str] = set()

    def __repr__(self) -> str:
        return f"InfoMetrics({self.spec!r}, window={self.window!r})"

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        """Log the spec's keys of ``episode``'s last info (each agent's, multi-agent)."""
        infos = _last_infos(episode)
        for key, outputs in self._plan:
            values = [info[key] for info in infos if key in info]
            if not values:
                self._count_missing(key, episode, infos, metrics_logger)
                continue
            for value in values:
                number = _number(key, value)
                for name, reduce in outputs:
                    metrics_logger.log_value(name, number, reduce=reduce, window=self.window)

    def get_state(self) -> dict[str, Any]:
        """Return the missing counts (checkpoints keep them)."""
        return {"missing": dict(self.missing)}

    def set_state(self, state: dict[str, Any]) -> None:
        """Restore the missing counts ``get_state()`` returned."""
        for key, count in state["missing"].items():
            if key in self.missing:
                self.missing[key] = int(count)

    def _count_missing(
        self, key: str, episode: Any, infos: list[Mapping[Any, Any]], metrics_logger: Any
    ) -> None:
        self.missing[key] += 1
        metrics_logger.log_value((MISSING_KEY, key), 1, reduce="lifetime_sum")
        if key in self._warned:
            return
        self._warned.add(key)
        present = sorted({str(k) for info in infos for k in info})
        warnings.warn(
            f"InfoMetrics: {key!r} is not in the last info of episode "
            f"{getattr(episode, 'id_', None)!r} (its keys: {present!r}); such episodes are "
            f"skipped for {key!r} and counted in InfoMetrics.missing and under "
            f"'{MISSING_KEY}/{key}' (this warning is given once per key)",
            HookbusWarning,
            stacklevel=2,
        )


def _checked_window(window: Any) -> int | None:
    if window is None:
        return None
    if isinstance(window, numbers.Integral) and not isinstance(window, bool) and int(window) >= 1:
        return int(window)
    raise ConfigError(f"InfoMetrics: window={window!r} must be a positive int or None")


def _checked_plan(spec: Any, window: int | None) -> tuple[tuple[str, tuple[_Output, ...]], ...]:
    """Return, per info key, the metrics it logs; refuse anything but a valid spec."""
    if not isinstance(spec, Mapping) or not spec:
        raise ConfigError(
            f"InfoMetrics takes a non-empty dict of info key -> reduction or list of "
            f"reductions, e.g. {{'is_success': 'mean'}}; got {spec!r}"
        )
    plan = []
    sources: dict[str, str] = {}  # metric name -> what asked for it, to refuse clashes
    for key, reductions in spec.items():
        if not isinstance(key, str) or not key:
            raise ConfigError(f"InfoMetrics: info key {key!r} must be a non-empty str")
        if isinstance(reductions, str):
            outputs = [(key, _checked_reduction(key, reductions))]
        else:
            outputs = [(f"{key}_{r}", _checked_reduction(key, r)) for r in _listed(key, reductions)]
        for name, reduce in outputs:
            asked = f"{key!r}: {reduce!r}"
            if name in sources or name == MISSING_KEY:
                earlier = sources.get(name, "the missing-key counts")
                raise ConfigError(
                    f"InfoMetrics: {asked} and {earlier} would both log under {name!r}; "
                    f"rename one key or reduction"
                )
            sources[name] = asked
        plan.append((key, tuple((n, r if window else _UNWINDOWED[r]) for n, r in outputs)))
    return tuple(plan)


def _listed(key: str, reductions: Any) -> list[str]:
    if (
        not isinstance(reductions, Sequence)
        or isinstance(reductions, bytes)
        or not reductions
        or not all(isinstance(r, str) for r in reductions)
    ):
        raise ConfigError(
            f"InfoMetrics: the reductions of {key!r} must be a str or a non-empty list of "
            f"str, not {reductions!r}; each one of {', '.join(map(repr, REDUCTIONS))}"
        )
    if len(set(reductions)) != len(reductions):
        raise ConfigError(f"InfoMetrics: the reductions of {key!r} repeat one: {reductions!r}")
    return list(reductions)


def _checked_reduction(key: str, reduction: str) -> str:
    if reduction not in REDUCTIONS:
        raise ConfigError(
            f"InfoMetrics: reduction {reduction!r} of {key!r} is not one InfoMetrics "
            f"logs; allowed: {', '.join(map(repr, REDUCTIONS))} (each over the window)"
        )
    return reduction


def _last_infos(episode: Any) -> list[Mapping[Any, Any]]:
    """Return the episode's last info, or each agent's of a multi-agent episode."""
    agents = getattr(episode, "agent_episodes", None)
    if isinstance(agents, Mapping):  # hookbus's MultiAgentEpisode and RLlib's
        infos = [agent.get_infos(-1) for agent in agents.values()]
    else:
        infos = [episode.get_infos(-1)]
    for info in infos:
        if not isinstance(info, Mapping):
            raise ConfigError(
                f"InfoMetrics reads an episode's last info as a dict; episode "
                f"{getattr(episode, 'id_', None)!r} has {_described(info)}"
            )
    return infos


def _number(key: str, value: Any) -> int | float:
    """Return ``value`` as a Python int or float (a bool as 0 or 1), or refuse it."""
    number = value
    if isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.size == 1):
        number = value.item()  # numpy's scalar, or an array's one element, as Python's
    if isinstance(number, bool):
        return int(number)
    if isinstance(number, int | float):
        return number
    if isinstance(number, numbers.Real):  # a Fraction, say
        return float(number)
    raise ConfigError(
        f"InfoMetrics: info key {key!r} holds {_described(value)}, not a number; "
        f"allowed: int, float, bool, a numpy number or bool, a numpy array of one element"
    )


def _described(value: Any) -> str:
    kind = type(value)
    name = (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )
    if isinstance(value, np.ndarray):
        return f"a {name} of shape {value.shape} and dtype {value.dtype}: {reprlib.repr(value)}"
    return f"a {name}: {reprlib.repr(value)}"
