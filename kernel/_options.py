"""The options of a bus, declared once: ``Bus(...)``, ``config.callbacks(...)`` and
``check_callbacks(...)`` take them as keywords, and all three build a ``BusOptions``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import msgspec

from ._errors import ConfigError
from ._plugins import check_plugin_selection
from ._stats import check_seconds

__all__ = (
    "ON_ERROR_POLICIES",
    "BusOptions",
    "OnError",
    "check_on_error",
    "check_quarantine_after",
)

OnError = Literal["raise", "log", "collect", "quarantine"]
ON_ERROR_POLICIES: tuple[OnError, ...] = ("raise", "log", "collect", "quarantine")


class BusOptions(msgspec.Struct, frozen=True, kw_only=True):
    """How a bus treats its handlers (everything ``Bus(...)`` takes but the handlers).

    Checked when made: a bad value is a ConfigError naming it (plugins by name, without
    importing them). ``config.bus_options`` holds the ones ``config.callbacks(...)`` set.
    """

    on_error: str = "raise"
    """``"raise"``, ``"log"``, ``"collect"`` or ``"quarantine"`` (docs/errors.md)."""
    plugins: bool | Sequence[str] = False
    """True for every installed plugin, or a list of their names (docs/subscribing.md)."""
    quarantine_after: int = 3
    """Failures before a handler under ``on_error="quarantine"`` is unsubscribed."""
    statistics: bool = False
    """True: time every handler, for ``bus.statistics().handlers``."""
    deadline: float | None = None
    """Seconds: every handler's default time limit (an async one past it is cancelled)."""
    watchdog: float | None = None
    """Seconds: log a warning for any handler call that runs longer."""

    def __post_init__(self) -> None:
        check_on_error(self.on_error)
        check_quarantine_after(self.quarantine_after)
        for name in ("deadline", "watchdog"):
            seconds = check_seconds(getattr(self, name), name)
            msgspec.structs.force_setattr(self, name, seconds)  # ints become floats
        msgspec.structs.force_setattr(self, "statistics", bool(self.statistics))
        if self.plugins is not False:
            check_plugin_selection(self.plugins)

    @classmethod
    def pick(cls, arguments: Mapping[str, Any]) -> BusOptions:
        """Return the options among ``arguments`` by name (a function's ``locals()``)."""
        return cls(**{name: arguments[name] for name in cls.__struct_fields__})

    def keywords(self) -> dict[str, Any]:
        """Return the options as the keywords that ``Bus(...)`` takes."""
        return msgspec.structs.asdict(self)


def check_on_error(on_error: object) -> None:
    """Raise ConfigError unless ``on_error`` is one of ``ON_ERROR_POLICIES``."""
    if on_error not in ON_ERROR_POLICIES:
        raise ConfigError(
            f"unknown on_error policy {on_error!r}; allowed: "
            + ", ".join(repr(p) for p in ON_ERROR_POLICIES)
        )


def check_quarantine_after(n: object) -> None:
    """Raise ConfigError unless ``n`` (failures before quarantine) is an int >= 1."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ConfigError(f"quarantine_after must be an int >= 1, got {n!r}")
