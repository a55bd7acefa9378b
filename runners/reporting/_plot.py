"""Learning curves from run directories' ``result.jsonl`` (what ``hookbus plot`` draws)."""

from __future__ import annotations

import difflib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from hookbus.kernel import ConfigError

from ._files import flatten
from ._json import RESULT_FILE
from ._tensorboard import STEP_KEY

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ("DEFAULT_METRIC", "plot_runs")

DEFAULT_METRIC = "env_runners/episode_return_mean"
_EXTRA = 'pip install "hookbus[plot]"'
_WIDTH, _HEIGHT_PER_METRIC, _MARGIN, _DPI = 8.0, 3.0, 1.5, 100


@dataclass
class _Run:
    """One run directory's results, flattened: key -> value, one dict per iteration."""

    name: str
    rows: list[dict[str, Any]]

    def series(self, x: str, y: str) -> tuple[np.ndarray, np.ndarray]:
        """Return the iterations' (x, y) where both are numbers (null is NaN: left out)."""
        pairs = [(row.get(x), row.get(y)) for row in self.rows]
        points = [(a, b) for a, b in pairs if _is_number(a) and _is_number(b)]
        xs = np.array([a for a, _ in points], dtype=float)
        ys = np.array([b for _, b in points], dtype=float)
        return xs, ys

    def numeric_keys(self) -> set[str]:
        return {key for row in self.rows for key, value in row.items() if _is_number(value)}


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def plot_runs(
    run_dirs: Sequence[str | os.PathLike[str]],
    *,
    metrics: Sequence[str] = (DEFAULT_METRIC,),
    x: str = STEP_KEY,
    mean: bool = False,
    output: str | os.PathLike[str] | None = None,
    title: str | None = None,
) -> Path:
    """Draw ``metrics`` over ``x`` from each run directory's ``result.jsonl``; return the file.

    ``output`` defaults to ``curve.png`` in the run directory (with several, in the folder
    that holds them all); ``title`` to the run's name (the runs' names, with ``mean`` too).

    One panel per metric (8 x 4.5 inches at 100 dpi for one, 3 inches more per extra
    metric). Each run is a line labelled with its directory's name; with ``mean``, the runs
    (seeds, say) are interpolated onto the x values they all cover and drawn as their mean,
    with a band from their minimum to their maximum. Needs matplotlib (``pip install
    "hookbus[plot]"``); draws off screen (Agg). Bad input raises ConfigError: a path that
    is not a run directory, a key that no run has (naming the keys they do have).
    """
    figure_class = _figure_class()
    runs = [_read_run(Path(d), name) for d, name in zip(run_dirs, _labels(run_dirs), strict=True)]
    if not runs:
        raise ConfigError("no run directory given")
    _check_key(runs, x, "x")
    for metric in metrics:
        _check_key(runs, metric, "metric")
    figure = figure_class(
        figsize=(_WIDTH, _MARGIN + _HEIGHT_PER_METRIC * len(metrics)), dpi=_DPI, layout="tight"
    )
    axes = figure.subplots(len(metrics), 1, squeeze=False, sharex=True)[:, 0]
    for ax, metric in zip(axes, metrics, strict=True):
        if mean:
            _draw_mean(ax, runs, x, metric)
        else:
            _draw_runs(ax, runs, x, metric)
        ax.set_ylabel(metric)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize="small")  # the same runs in every panel: one legend
    axes[-1].set_xlabel(x)
    axes[0].set_title(title if title is not None else _title([run.name for run in runs], mean))
    path = Path(output) if output is not None else _default_output(run_dirs)
    try:
        figure.savefig(path)
    except (OSError, ValueError) as exc:  # a missing folder; a format matplotlib lacks
        raise ConfigError(f"cannot write {os.fspath(path)!r}: {exc}") from exc
    return path


def _title(names: Sequence[str], mean: bool) -> str:
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    if len(names) == 1:
        return shown
    return f"mean of {len(names)} runs ({shown})" if mean else f"{len(names)} runs: {shown}"


def _default_output(run_dirs: Sequence[str | os.PathLike[str]]) -> Path:
    """``curve.png`` in the run directory, or in the folder that holds all of several."""
    if len(run_dirs) == 1:
        return Path(run_dirs[0]) / "curve.png"
    common = os.path.commonpath([os.path.abspath(d) for d in run_dirs])
    return Path(common) / "curve.png"


def _figure_class() -> Any:
    """Import matplotlib's Figure (no pyplot: no global state, no screen), or explain."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ConfigError(f"plotting needs matplotlib, which is missing: {_EXTRA}") from exc
    return Figure


def _labels(run_dirs: Sequence[str | os.PathLike[str]]) -> list[str]:
    # The directories' names, unless two runs share one (a/seed0, b/seed0): then as given.
    names = [Path(d).resolve().name for d in run_dirs]
    if len(set(names)) < len(names):
        return [os.fspath(d) for d in run_dirs]
    return names


def _read_run(path: Path, name: str) -> _Run:
    """Read a run directory's results; a torn last line (a crash mid-write) is left out."""
    if not path.is_dir():
        raise ConfigError(f"{os.fspath(path)!r} is not a run directory (no such directory)")
    results = path / RESULT_FILE
    if not results.is_file():
        raise ConfigError(f"{os.fspath(path)!r} is not a run directory: it has no {RESULT_FILE}")
    lines = results.read_bytes().split(b"\n")
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            result = msgspec.json.decode(line)
        except msgspec.DecodeError as exc:
            if number == len(lines):  # no newline after it: written when the run died
                break
            raise ConfigError(f"{os.fspath(results)!r}, line {number}: {exc}") from exc
        if isinstance(result, dict):
            rows.append(dict(flatten(result)))
    if not rows:
        raise ConfigError(f"{os.fspath(results)!r} has no finished iteration yet")
    return _Run(name, rows)


def _check_key(runs: list[_Run], key: str, what: str) -> None:
    """Raise ConfigError unless some run has numbers under ``key``; name the keys they have."""
    keys = set().union(*(run.numeric_keys() for run in runs))
    if key in keys:
        return
    close = difflib.get_close_matches(key, keys, n=1, cutoff=0.5)
    hint = f"; closest: {close[0]!r}" if close else ""
    raise ConfigError(
        f"no run has numbers under {what} {key!r}{hint}; the runs' numeric keys: "
        + ", ".join(sorted(keys))
    )


def _curves(runs: list[_Run], x: str, metric: str) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Return each run's (name, x, y) with at least one point; refuse when none has one."""
    curves = [(run.name, *_sorted_unique(*run.series(x, metric))) for run in runs]
    curves = [curve for curve in curves if len(curve[1])]
    if not curves:
        raise ConfigError(f"no run has numbers under both {x!r} and {metric!r} in one iteration")
    return curves


def _draw_runs(ax: Axes, runs: list[_Run], x: str, metric: str) -> None:
    for name, xs, ys in _curves(runs, x, metric):
        ax.plot(xs, ys, linewidth=1.5, label=name)


def _draw_mean(ax: Axes, runs: list[_Run], x: str, metric: str) -> None:
    """Draw the runs' mean and min-max band on the x values every run covers."""
    curves = [(xs, ys) for _, xs, ys in _curves(runs, x, metric)]
    # Interpolate only where every run has data: a mean beyond the shortest run's end
    # would silently be the mean of fewer runs.
    lo = max(xs[0] for xs, _ in curves)
    hi = min(xs[-1] for xs, _ in curves)
    if lo > hi:
        raise ConfigError(f"the runs' {x!r} ranges do not overlap: no common x to average on")
    every_x = np.unique(np.concatenate([xs for xs, _ in curves]))
    grid = every_x[(every_x >= lo) & (every_x <= hi)]
    values = np.stack([np.interp(grid, xs, ys) for xs, ys in curves])
    line = ax.plot(
        grid,
        values.mean(axis=0),
        linewidth=2,
        label=f"mean of {len(curves)} run{'s' * (len(curves) > 1)}",
    )
    ax.fill_between(
        grid,
        values.min(axis=0),
        values.max(axis=0),
        color=line[0].get_color(),
        alpha=0.25,
        linewidth=0,
        label="min-max across runs",
    )


def _sorted_unique(xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # np.interp needs increasing x; a repeated x (a restored run) keeps its last value.
    order = np.argsort(xs, kind="stable")
    xs, ys = xs[order], ys[order]
    keep = np.append(xs[1:] != xs[:-1], True)
    return xs[keep], ys[keep]
