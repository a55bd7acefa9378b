"""``hookbus tune SWEEP``: a Ray Tune sweep from a file (settings with search spaces, stop, ...).

The sweep file (TOML, YAML or JSON) holds ``algo``, ``config`` (sections of settings, as a
``--config`` file, where any value may be a search space: a table with one key of
``grid_search``, ``choice``, ``uniform``, ``loguniform``, ``randint``), ``stop``,
``num_samples``, ``metric`` and ``mode``, and ``scheduler`` (``{type = "asha", ...}`` with
ASHA's own keywords, or ``"fifo"``). Ray Tune's presence is checked first; then everything
is checked before Ray starts: each value a search space can take is checked as the setting's
own check does, so a bad file is one line.

A sweep file names code by design, as a ``--config`` file or a script does (an env as
``module:Class`` or ``file.py:Class``), but checking it imports none of that code: the
module or file is only looked for (``without_env_imports``). The trials import it when the
sweep runs.
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Mapping
from typing import Any

from hookbus.kernel import HookbusError

from ..algorithm import require_tune
from ..envs import without_env_imports
from ._args import UsageError
from ._experiment import config_class, read_config_file

__all__ = ("add_tune_command", "read_sweep")

_KEYS = ("algo", "config", "stop", "num_samples", "metric", "mode", "scheduler", "storage_path")
_SPACES = {"grid_search": list, "choice": list, "uniform": 2, "loguniform": 2, "randint": 2}
_SCHEDULERS = ("fifo", "asha")
_ASHA_OPTIONS = ("max_t", "grace_period", "reduction_factor", "brackets", "stop_last_trials")


def add_tune_command(commands: Any) -> None:
    """Add the ``tune`` sub-command to ``commands`` (what ``add_subparsers()`` returned)."""
    tune = commands.add_parser(
        "tune",
        help="run a Ray Tune sweep from a sweep file (needs hookbus[tune])",
        description="Run a Ray Tune sweep from a TOML, YAML or JSON sweep file (docs/tune.md).",
    )
    tune.add_argument("sweep", help="the sweep file")
    tune.add_argument("--storage-path", help="where Tune writes the experiment")
    tune.add_argument("--debug", action="store_true", help="show tracebacks")
    tune.set_defaults(run=_tune)


def _tune(args: argparse.Namespace) -> int:
    tune = require_tune()  # first: without Ray, the file's contents do not matter
    sweep = read_sweep(args.sweep)
    results = tune.Tuner(
        config_class(sweep["algo"]).algo_class,
        param_space=_param_space(tune, sweep["config"]),
        tune_config=tune.TuneConfig(
            num_samples=sweep["num_samples"],
            metric=sweep["metric"],
            mode=sweep["mode"],
            scheduler=_scheduler(tune, sweep["scheduler"]),
        ),
        run_config=tune.RunConfig(
            stop=sweep["stop"], storage_path=args.storage_path or sweep["storage_path"]
        ),
    ).fit()
    best = results.get_best_result()
    print(f"best trial: {best.path}")
    print(f"  {sweep['metric']} = {_nested(best.metrics, sweep['metric'])}")
    for section, values in sorted(_spaced(sweep["config"]).items()):
        chosen = best.config.get(section, {})
        print("  " + ", ".join(f"{section}.{name} = {chosen.get(name)!r}" for name in values))
    return 1 if results.num_errors else 0


def read_sweep(path: str) -> dict[str, Any]:
    """Read and check sweep file ``path``; UsageError (one line) naming what is wrong.

    Nothing the file names is imported: an env's module or file must exist, and the trials
    import it when the sweep runs.
    """
    table = read_config_file(path)
    unknown = [key for key in table if key not in _KEYS]
    if unknown:
        raise UsageError(f"sweep {path!r}: unknown key {unknown[0]!r}; allowed: {', '.join(_KEYS)}")
    sweep = {
        "algo": table.get("algo", "PPO"),
        "config": table.get("config", {}),
        "stop": table.get("stop", {"training_iteration": 10}),
        "num_samples": table.get("num_samples", 1),
        "metric": table.get("metric", "env_runners/episode_return_mean"),
        "mode": table.get("mode", "max"),
        "scheduler": table.get("scheduler", "fifo"),
        "storage_path": table.get("storage_path"),
    }
    _check(path, sweep)
    return sweep


def _check(path: str, sweep: dict[str, Any]) -> None:
    where = f"sweep {path!r}"
    if not isinstance(sweep["config"], Mapping):
        raise UsageError(f"{where}: 'config' must be a table of sections, got {sweep['config']!r}")
    if not isinstance(sweep["stop"], Mapping):
        raise UsageError(f"{where}: 'stop' must be a table of result keys, got {sweep['stop']!r}")
    if not isinstance(sweep["num_samples"], int) or sweep["num_samples"] < 1:
        raise UsageError(f"{where}: num_samples must be an int >= 1, got {sweep['num_samples']!r}")
    if sweep["mode"] not in ("max", "min"):
        raise UsageError(f"{where}: mode must be 'max' or 'min', got {sweep['mode']!r}")
    _scheduler_type(where, sweep["scheduler"])
    spaced = _spaced(sweep["config"], where)
    for values in _candidates(sweep["config"], spaced):
        try:  # each value a search space can take, checked as the setting's check does
            with without_env_imports():
                config_class(sweep["algo"])().update_from_dict(values, where=where).validate()
        except HookbusError as exc:
            raise UsageError(str(exc) if str(exc).startswith(where) else f"{where}: {exc}") from exc


def _spaced(config: Mapping[str, Any], where: str = "") -> dict[str, dict[str, Any]]:
    """Return the settings given as search spaces, by section: ``{section: {name: spec}}``."""
    spaced: dict[str, dict[str, Any]] = {}
    for section, values in config.items():
        for name, value in values.items() if isinstance(values, Mapping) else ():
            if isinstance(value, Mapping) and len(value) == 1 and next(iter(value)) in _SPACES:
                _check_space(where, f"{section}.{name}", value)
                spaced.setdefault(section, {})[name] = value
    return spaced


def _check_space(where: str, name: str, spec: Mapping[str, Any]) -> None:
    kind, args = next(iter(spec.items()))
    wanted = _SPACES[kind]
    if wanted is list and not (isinstance(args, list) and args):
        raise UsageError(f"{where}: {name} = {{{kind} = ...}} needs a non-empty list, got {args!r}")
    if wanted == 2 and not (isinstance(args, list) and len(args) == 2):
        raise UsageError(f"{where}: {name} = {{{kind} = ...}} needs [low, high], got {args!r}")


def _candidates(config: Mapping[str, Any], spaced: dict[str, dict[str, Any]]) -> list[Any]:
    """Return copies of ``config`` with each search space set to each value it can take
    (list spaces: every value; ranges: both ends), one setting varied at a time."""
    fixed = {s: dict(v) if isinstance(v, Mapping) else v for s, v in config.items()}
    for section, values in spaced.items():
        for name, spec in values.items():
            fixed[section][name] = _values_of(spec)[0]
    copies = [fixed]
    for section, values in spaced.items():
        for name, spec in values.items():
            for value in itertools.islice(_values_of(spec), 1, None):
                varied = {s: dict(v) if isinstance(v, Mapping) else v for s, v in fixed.items()}
                varied[section][name] = value
                copies.append(varied)
    return copies


def _values_of(spec: Mapping[str, Any]) -> list[Any]:
    kind, args = next(iter(spec.items()))
    return list(args) if kind in ("grid_search", "choice") else [args[0], args[1]]


def _param_space(tune: Any, config: Mapping[str, Any]) -> dict[str, Any]:
    spaced = _spaced(config)
    space: dict[str, Any] = {s: dict(v) if isinstance(v, Mapping) else v for s, v in config.items()}
    for section, values in spaced.items():
        for name, spec in values.items():
            kind, args = next(iter(spec.items()))
            space[section][name] = (
                getattr(tune, kind)(args)
                if kind in ("grid_search", "choice")
                else getattr(tune, kind)(*args)
            )
    return space


def _scheduler_type(where: str, scheduler: Any) -> tuple[str, dict[str, Any]]:
    options = dict(scheduler) if isinstance(scheduler, Mapping) else {"type": scheduler}
    kind = options.pop("type", None)
    if kind not in _SCHEDULERS:
        raise UsageError(
            f"{where}: scheduler type must be one of {', '.join(map(repr, _SCHEDULERS))}, "
            f"got {kind!r}"
        )
    allowed = _ASHA_OPTIONS if kind == "asha" else ()
    unknown = [key for key in options if key not in allowed]
    if unknown:
        raise UsageError(
            f"{where}: unknown {kind} scheduler option {unknown[0]!r}; allowed: "
            f"{', '.join(allowed) or 'none'}"
        )
    return str(kind), options


def _scheduler(tune: Any, scheduler: Any) -> Any:
    kind, options = _scheduler_type("sweep", scheduler)
    if kind == "fifo":
        return None
    return tune.schedulers.ASHAScheduler(time_attr="training_iteration", **options)


def _nested(metrics: Mapping[str, Any], key: str) -> Any:
    value: Any = metrics
    for part in key.split("/"):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value
