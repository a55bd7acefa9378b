"""What the CLI prints: the progress line, the final table, metric listings."""

from __future__ import annotations

from typing import Any, TextIO

from ..reporting import flatten

__all__ = ("cell", "flatten", "print_metrics", "printable", "progress", "table")

BUILTIN_ENV_RUNNER_KEYS = {
    "episode_return_mean",
    "episode_return_min",
    "episode_return_max",
    "episode_len_mean",
    "episode_len_min",
    "episode_len_max",
    "num_episodes",
    "num_episodes_lifetime",
    "num_env_steps_sampled",
    "num_env_steps_sampled_lifetime",
    "num_healthy_env_runners",
    "num_env_runner_restarts",
}


# Keys of train()'s result that hookbus itself writes; any other key a callback put into
# ``result`` (in on_train_result) gets a column of its own, as its metrics in env_runners do.
BUILTIN_RESULT_KEYS = {
    "training_iteration",
    "num_env_steps_sampled_lifetime",
    "env_runners",
    "env_runner_group",
    "learners",
    "timers",
    "evaluation",
    "callbacks",
    "control",
}


def printable(text: str) -> str:
    """Return ``text`` with every character a terminal could act on written as an escape.

    Text read from a file (a recording's header, sources, tags, field values, error messages
    quoting them) must never reach the terminal raw: ESC and the other C0 and C1 controls
    can clear the screen, retitle the window or fake output lines. Those, DEL, and whatever
    else Python deems unprintable (line separators, bidirectional overrides) become
    backslash escapes as ``repr`` writes them (ESC is ``\\x1b``); the rest is unchanged.
    """
    if text.isprintable():
        return text  # the usual case, at C speed
    return "".join(c if c.isprintable() else _escape(c) for c in text)


_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    short = _SHORT_ESCAPES.get(char)
    if short is not None:
        return short
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def print_metrics(metrics: dict[str, Any]) -> None:
    """Print metrics one per line; callbacks may have logged names or values from a file."""
    rows = [(printable(key), printable(cell(value))) for key, value in flatten(metrics)]
    if not rows:
        print("the callbacks logged no metrics")
    width = max((len(key) for key, _ in rows), default=0)
    for key, value in rows:
        print(f"  {key:<{width}}  {value}")


def progress(out: TextIO, result: dict[str, Any], done: float, label: str, per_it: float) -> None:
    """Print one progress line: a bar at ``done`` (0..1), ``label``, return, steps, s/it."""
    runners = result.get("env_runners", {})
    width = 20
    filled = round(width * done)
    bar = "#" * filled + "." * (width - filled)
    line = (
        f"[{bar}] iter {result['training_iteration']}  {label}  "
        f"return {runners.get('episode_return_mean', float('nan')):.2f}  "
        f"steps {result.get('num_env_steps_sampled_lifetime', 0)}  "
        f"{per_it:.2f}s/it"
    )
    if out.isatty():
        print("\r" + line, end="", file=out, flush=True)
    else:
        print(line, file=out, flush=True)


def table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "no iteration finished"
    custom = sorted(
        {k for r in rows for k in r.get("env_runners", {}) if k not in BUILTIN_ENV_RUNNER_KEYS}
    )
    added = [dict(_added_by_callbacks(r)) for r in rows]
    columns = sorted({k for a in added for k in a})
    # Episodes and env steps are counted over the whole run (RLlib's *_lifetime), not per row.
    headers = ["iter", "return_mean", "len_mean", "episodes (total)", "env_steps (total)"]
    headers += [*custom, *columns]
    lines = []
    for r, a in zip(rows, added, strict=True):
        er = r.get("env_runners", {})
        cells = [
            r["training_iteration"],
            er.get("episode_return_mean"),
            er.get("episode_len_mean"),
            er.get("num_episodes_lifetime"),
            r.get("num_env_steps_sampled_lifetime"),
            *(er.get(k) for k in custom),
            *(a.get(k) for k in columns),
        ]
        lines.append([cell(c) for c in cells])
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(headers)]
    out = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))]
    out.append("  ".join("-" * w for w in widths))
    out += ["  ".join(c.rjust(w) for c, w in zip(line, widths, strict=True)) for line in lines]
    return "\n".join(out)


def _added_by_callbacks(result: dict[str, Any]) -> list[tuple[str, Any]]:
    """The numbers and strings a callback wrote into ``result`` itself, flattened."""
    extra = {k: v for k, v in result.items() if k not in BUILTIN_RESULT_KEYS}
    return [(k, v) for k, v in flatten(extra) if isinstance(v, int | float | str | bool)]


def cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)
