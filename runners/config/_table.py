"""The settings table: docs/settings.md and ``hookbus settings``, derived from the declarations."""

from __future__ import annotations

import types
from collections.abc import Iterable, Sequence
from typing import Any, Literal, Union, get_args, get_origin

from ._checks import Check
from ._declarations import SettingInfo
from ._sections import ConfigSections

__all__ = ("settings_markdown", "settings_rows")

_HEADER = ("setting", "type", "default", "takes", "what it is")


def settings_rows(infos: Iterable[SettingInfo]) -> list[tuple[str, str, str, str, str]]:
    """Return a row per setting: name, type, default, what it takes and its doc line."""
    return [
        (info.name, _type_name(info.type), repr(info.default), _takes(info), info.doc)
        for info in infos
    ]


def settings_markdown(
    base: type[ConfigSections], algorithms: Sequence[type[ConfigSections]]
) -> str:
    """Return docs/settings.md: ``base``'s settings by section, then what each algorithm changes."""
    parts = [
        "# Settings",
        "",
        "Every setting of `AlgorithmConfig`, by section (builder method), as its declaration in",
        "`runners/config/_settings.py` gives it; each algorithm's own follow. This page is made",
        "from those declarations (`hookbus settings --markdown`); a test checks that it agrees.",
        "`hookbus settings --algo PPO` prints one algorithm's settings in the terminal.",
        "`config.validate()` (and `build()`, and loading a checkpoint's stored config) checks",
        "every one. Besides the bounds in the table, every int setting is at most",
        "`2**31 - 1` (a count or size beyond it is a mistake, or a hostile file), and a number",
        "setting refuses an int too large for a float.",
    ]
    common = {(i.section, i.name): i for i in base.setting_infos()}
    for section in base.sections:
        parts += [
            "",
            f"## `{section}()`",
            "",
            *_table(i for i in common.values() if i.section == section),
        ]
    for algorithm in algorithms:
        changed = [
            info
            for info in algorithm.setting_infos()
            if (old := common.get((info.section, info.name))) is None or old.default != info.default
        ]
        parts += ["", f"## {algorithm.__name__}: its own settings and changed defaults", ""]
        parts += _table(changed, with_section=True)
    return "\n".join(parts) + "\n"


def _table(infos: Iterable[SettingInfo], *, with_section: bool = False) -> list[str]:
    infos = list(infos)
    header: tuple[str, ...] = _HEADER
    rows: list[tuple[str, ...]] = list(settings_rows(infos))
    if with_section:
        header = ("section", *header)
        rows = [(f"{i.section}()", *row) for i, row in zip(infos, rows, strict=True)]
    code = len(header) - 2  # the last two columns are prose
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = [c.replace("|", "\\|") for c in row]
        cells = [f"`{c}`" if k < code else c for k, c in enumerate(cells)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _type_name(hint: Any) -> str:
    """Name a type as code would: ``int | 'auto'``, ``dict[str, Any]``; Any holds code."""
    if hint is Any:
        return "Any (code)"
    if hint is type(None):
        return "None"
    origin, args = get_origin(hint), get_args(hint)
    if origin is Literal:
        return " | ".join(map(repr, args))
    if origin in (Union, types.UnionType):
        return " | ".join(_type_name(a) for a in args)
    if origin is not None:
        return f"{origin.__name__}[{', '.join('Any' if a is Any else _type_name(a) for a in args)}]"
    return getattr(hint, "__name__", str(hint))


def _takes(info: SettingInfo) -> str:
    return info.check.allows if isinstance(info.check, Check) else ""
