"""An experiment from the command line: a config file, ``--set`` overrides, stop conditions.

Settings are applied in this order, later ones winning: the algorithm's defaults, the
``--config`` file, ``--set`` overrides, then the dedicated options (``--env``, ``--seed``,
...). Files and overrides decode through the config's section structs, so they are checked
exactly as ``config.update_from_dict`` checks them, with the file or option named.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from typing import Any

import msgspec

from ._args import UsageError
from ._config_file import MAX_BYTES, MAX_DEPTH, check_size, read_config_file
from ._output import flatten

__all__ = (
    "STOP_ALIASES",
    "StopConditions",
    "config_class",
    "parse_override",
    "read_config_file",
    "shown",
)

ALGORITHMS = ("PPO", "DQN")
STOP_ALIASES = {
    "timesteps": "num_env_steps_sampled_lifetime",
    "timesteps_total": "num_env_steps_sampled_lifetime",
    "iterations": "training_iteration",
}
"""Short names ``--stop`` accepts for result keys (Tune's ``timesteps_total`` included)."""


def config_class(name: str) -> Any:
    """Return the config class of algorithm ``name`` (PPO or DQN, any case)."""
    from ..algorithms.dqn import DQNConfig
    from ..algorithms.ppo import PPOConfig

    classes = {"PPO": PPOConfig, "DQN": DQNConfig}
    try:
        return classes[name.upper()]
    except (KeyError, AttributeError):
        raise UsageError(f"unknown algorithm {name!r}; available: {', '.join(classes)}") from None


def parse_override(text: str, option: str) -> tuple[str, Any]:
    """Split ``KEY=VALUE``; the value is JSON when it parses as JSON, else a string.

    Bounded as config files are (``MAX_BYTES``, ``MAX_DEPTH``, ``MAX_VALUES``).
    """
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise UsageError(f"{option} expects KEY=VALUE, got {shown(text)!r}")
    what = f"{option} {shown(key.strip())!r}"
    if len(raw) > MAX_BYTES:
        raise UsageError(f"{what}: the value is longer than {MAX_BYTES} characters (1 MiB)")
    try:
        value = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        value = raw  # a bare word: --set backend=process
    except RecursionError:
        raise UsageError(f"{what} nests deeper than {MAX_DEPTH} levels") from None
    check_size(value, what)
    return key.strip(), value


def shown(text: str, limit: int = 80) -> str:
    """Return ``text`` cut to ``limit`` characters, with its length said if it was longer."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


class StopConditions:
    """Tune's stop dict: stop once any result key reaches its value (``>=``)."""

    def __init__(self, specs: list[str], iterations: int | None) -> None:
        self.targets: dict[str, float] = {}
        for text in specs:
            key, value = parse_override(text, "--stop")
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise UsageError(
                    f"--stop {shown(text)!r}: the value must be a number, got {shown(repr(value))}"
                )
            self.targets[STOP_ALIASES.get(key, key)] = float(value)
        if iterations is not None or not self.targets:
            self.targets.setdefault("training_iteration", float(iterations or 20))
        self._checked = False

    def reached(self, result: Mapping[str, Any]) -> list[str]:
        """Return the conditions ``result`` meets, as ``key=value`` (empty: go on)."""
        values = dict(flatten(dict(result)))
        if not self._checked:  # the first result tells which keys exist
            self._check_keys(values)
            self._checked = True
        return [
            f"{key}={_number(values[key])}"
            for key, target in self.targets.items()
            if _as_float(values.get(key)) >= target
        ]

    def progress(self, result: Mapping[str, Any]) -> tuple[float, str]:
        """Return how far the nearest condition is (0..1) and a label: ``key value/target``."""
        values = dict(flatten(dict(result)))
        best = max(self.targets, key=lambda k: _fraction(values.get(k), self.targets[k]))
        value = values.get(best)
        label = f"{best} {_number(value)}/{_number(self.targets[best])}"
        return _fraction(value, self.targets[best]), label

    def _check_keys(self, values: Mapping[str, Any]) -> None:
        for key in self.targets:
            if key not in values:
                close = difflib.get_close_matches(key, list(values), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise UsageError(
                    f"--stop {key!r} is not a key of the results{hint}; aliases: "
                    f"{', '.join(STOP_ALIASES)}"
                )


def _as_float(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return -math.inf
    return -math.inf if math.isnan(number) else number


def _fraction(value: Any, target: float) -> float:
    number = _as_float(value)
    if target <= 0 or number == -math.inf:
        return 1.0 if number >= target else 0.0
    return max(0.0, min(1.0, number / target))


def _number(value: object) -> str:
    if isinstance(value, float):
        return f"{value:g}" if not math.isfinite(value) or value.is_integer() else f"{value:.2f}"
    return str(value)
