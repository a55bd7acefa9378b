"""How a setting is declared, and read back from its declaration.

A section of ``AlgorithmConfig`` is a ``Settings`` struct (``_settings`` declares them all);
each field is one setting, ``Annotated[type, Setting(doc, check)]``. ``setting_infos``
reads a section's declarations back as ``SettingInfo`` rows, the one source of the builder
methods, the attributes, the checks, the settings table and what crosses to workers.
``NOT_SET`` is what a builder method's omitted keyword means.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from typing import Annotated, Any, ClassVar, NamedTuple, get_args, get_origin, get_type_hints

import msgspec

__all__ = ("NOT_SET", "Setting", "SettingInfo", "Settings", "check_values", "setting_infos")


class _NotSet:
    def __repr__(self) -> str:
        return "NOT_SET"


NOT_SET: Any = _NotSet()
"""What a builder method's omitted keyword means: "leave this setting as it is"."""


class Setting:
    """A setting's declaration beside its type: ``Annotated[float, Setting(doc, check)]``."""

    __slots__ = ("by_value", "check", "doc")

    def __init__(
        self,
        doc: str,
        check: Callable[[str, object], None] | None = None,
        *,
        by_value: bool = False,
    ) -> None:
        self.doc = doc
        """One line for the settings table and the builder method's docstring."""
        self.check = check
        """``check(name, value)`` raising ConfigError (a ``Check``), or None: any value."""
        self.by_value = by_value
        """Code that crosses to workers by value (cloudpickle), lambdas included: for
        settings RLlib's examples fill with a lambda (``env_to_module_connector``)."""


class Settings(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """One section of a config: every field a setting, with its type and default."""

    renamed: ClassVar[Mapping[str, str]] = {}
    """RLlib's deprecated keywords of this section's builder, to the setting each sets now
    (RLlib 2.40 still takes them, with a DeprecationWarning)."""
    aliases: ClassVar[Mapping[str, str]] = {}
    """RLlib's keywords that are another name of a setting here (no warning)."""

    def check(self) -> None:
        """Raise ConfigError for a bad combination of this section's settings."""

    @classmethod
    def merge(cls, current: Settings, given: dict[str, Any]) -> dict[str, Any]:
        """Return the values a builder call sets (``given`` unless a section merges)."""
        return given


class SettingInfo(NamedTuple):
    """One setting as its declaration gives it (for docs, checks and the wire)."""

    section: str
    name: str
    type: Any
    default: Any
    doc: str
    check: Any
    by_value: bool = False

    @property
    def holds_code(self) -> bool:
        """Whether the setting may hold code (typed ``Any``): a file cannot set it."""
        return self.type is Any

    @property
    def holds_objects(self) -> bool:
        """Whether the setting may hold any Python object (``Any`` in its type): pickled."""
        return self.type is Any or Any in _type_args(self.type)


def _type_args(hint: Any) -> set[Any]:
    args = set(get_args(hint))
    for arg in list(args):
        args |= _type_args(arg)
    return args


def setting_infos(section: str, struct: type[Settings]) -> Iterator[SettingInfo]:
    """Yield ``struct``'s settings, in declaration order, as their declarations give them.

    A field declared again only for a new default (``lr: float = 5e-4``) keeps the doc and
    check of the nearest base class that declares them.
    """
    hints = [get_type_hints(cls, include_extras=True) for cls in struct.__mro__ if _is_section(cls)]
    defaults = struct()
    for name in struct.__struct_fields__:
        declared = next(
            (d for h in hints if name in h for d in _settings_of(h[name])), Setting("", None)
        )
        hint = hints[0][name]
        if get_origin(hint) is Annotated:
            hint = get_args(hint)[0]
        yield SettingInfo(
            section,
            name,
            hint,
            getattr(defaults, name),
            declared.doc,
            declared.check,
            declared.by_value,
        )


@functools.cache
def _checks(struct: type[Settings]) -> dict[str, Any]:
    return {i.name: i.check for i in setting_infos("", struct) if i.check is not None}


def check_values(struct: type[Settings], values: Mapping[str, Any]) -> None:
    """Check ``values`` as ``struct`` declares (a learner checking its own arguments)."""
    checks = _checks(struct)
    for name, value in values.items():
        check = checks.get(name)
        if check is not None:
            check(name, value)


def _is_section(cls: type) -> bool:
    return isinstance(cls, type) and issubclass(cls, Settings) and cls is not Settings


def _settings_of(hint: Any) -> list[Setting]:
    if get_origin(hint) is not Annotated:
        return []
    return [extra for extra in get_args(hint)[1:] if isinstance(extra, Setting)]
