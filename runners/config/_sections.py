"""The config's sections as builder methods and attributes, derived from their structs.

``section(SomeSettings)`` in a config class body is the builder method of that section:
its keywords are the struct's fields, typed for editors and mypy (a ``ParamSpec`` taken
from the struct's constructor), and calling it sets the given settings and returns the
config. ``ConfigSections`` holds one frozen struct per section and gives every setting an
attribute (``config.lr``), derived from the structs when a config class is defined; data
(a config file, ``--set``, ``params.json``) decodes through the same structs.
"""

from __future__ import annotations

import copy
import functools
import inspect
import types
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Generic, ParamSpec, Self, TypeVar, overload

import msgspec

from hookbus.kernel import ConfigError

from .._deprecation import warn_deprecated
from ._declarations import NOT_SET, SettingInfo, Settings, setting_infos
from ._settings import (
    DebuggingSettings,
    EnvironmentSettings,
    EnvRunnersSettings,
    EvaluationSettings,
    FaultToleranceSettings,
    MultiAgentSettings,
    ReportingSettings,
    RLModuleSettings,
    TrainingSettings,
)
from ._suggest import did_you_mean, keyword_hint

__all__ = ("ConfigSections", "convert_section", "section")

P = ParamSpec("P")
C = TypeVar("C", bound="ConfigSections")
S = TypeVar("S", bound=Settings)


class section(Generic[P]):
    """Declare a config section: ``training = section(TrainingSettings)`` in a config class.

    On an instance it is the section's builder method: ``config.training(lr=1e-3)`` sets
    the settings given (an omitted keyword leaves its setting as it is) and returns the
    config. Its keywords and their types are the struct's fields.
    """

    def __init__(self, struct: Callable[P, Settings]) -> None:
        self.struct: type[Settings] = struct  # type: ignore[assignment]
        self.name = ""
        self.method: Callable[..., Any] = lambda *args, **kwargs: None

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.method = _builder(name, self.struct)

    @overload
    def __get__(self, obj: None, objtype: type | None = None) -> Callable[..., Any]: ...
    @overload
    def __get__(self, obj: C, objtype: type | None = None) -> Callable[P, C]: ...
    def __get__(self, obj: ConfigSections | None, objtype: type | None = None) -> Any:
        if obj is None:
            return self.method
        return types.MethodType(self.method, obj)


def _builder(name: str, struct: type[Settings]) -> Callable[..., Any]:
    """Make the builder method of section ``name``, with a signature derived from ``struct``."""
    infos = list(setting_infos(name, struct))
    names = [info.name for info in infos]
    # A struct whose fields are not keyword-only takes its first one positionally too
    # (``environment("CartPole-v1")``).
    first = next(iter(inspect.signature(struct).parameters.values()), None)
    keyword_only = first is None or first.kind is inspect.Parameter.KEYWORD_ONLY
    positional = [] if keyword_only else names[:1]

    def method(self: ConfigSections, *args: Any, **kwargs: Any) -> Any:
        if len(args) > len(positional):
            raise TypeError(
                f"{name}() takes {len(positional)} positional argument(s) but {len(args)} "
                f"were given; pass settings by keyword"
            )
        kwargs.update(zip(positional, args, strict=False))
        kwargs = _renamed(name, struct, kwargs)
        for key in kwargs:
            if key not in struct.__struct_fields__:
                hint = keyword_hint(key, name, names, self._section_of)
                raise TypeError(f"{name}() got an unexpected keyword argument {key!r}{hint}")
        return self._set(name, {k: v for k, v in kwargs.items() if v is not NOT_SET})

    kind = inspect.Parameter.KEYWORD_ONLY
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    parameters += [
        inspect.Parameter(
            info.name,
            inspect.Parameter.POSITIONAL_OR_KEYWORD if info.name in positional else kind,
            default=NOT_SET,
            annotation=info.type,
        )
        for info in infos
    ]
    method.__name__ = method.__qualname__ = name
    method.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    method.__annotations__ = {info.name: info.type for info in infos}
    lines = [f"- ``{info.name}`` ({info.default!r}): {info.doc}" for info in infos]
    method.__doc__ = f"{(struct.__doc__ or '').strip()}\n\n" + "\n".join(lines)
    return method


def _renamed(name: str, struct: type[Settings], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Map RLlib's other names of settings (``struct.renamed``, warned; ``aliases``) to ours."""
    renamed = {**struct.aliases, **struct.renamed}
    if not renamed.keys() & kwargs.keys():
        return kwargs
    mapped = {}
    for key, value in kwargs.items():
        new = renamed.get(key, key)
        if key in struct.renamed:
            warn_deprecated(
                f"AlgorithmConfig.{name}({key}=..)",
                f"AlgorithmConfig.{name}({new}=..)",
                stacklevel=4,
            )
        mapped[new] = value
    return mapped


class ConfigSections:
    """Settings by section: builder methods, an attribute per setting, data in and out."""

    environment = section(EnvironmentSettings)
    env_runners = section(EnvRunnersSettings)
    training = section(TrainingSettings)
    rl_module = section(RLModuleSettings)
    debugging = section(DebuggingSettings)
    evaluation = section(EvaluationSettings)
    fault_tolerance = section(FaultToleranceSettings)
    multi_agent = section(MultiAgentSettings)
    reporting = section(ReportingSettings)

    sections: ClassVar[dict[str, type[Settings]]] = {}
    """Each section's struct (derived from the ``section`` declarations, subclasses' win)."""
    _section_of: ClassVar[dict[str, str]] = {}

    if TYPE_CHECKING:  # every setting is an attribute (derived below, so Any to mypy)

        def __getattr__(self, name: str) -> Any: ...
        def __setattr__(self, name: str, value: Any) -> None: ...

    _is_frozen: bool = False  # freeze() sets it on an instance

    def __init__(self) -> None:
        self._values: dict[str, Settings] = {
            name: struct() for name, struct in self.sections.items()
        }

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _derive(cls)

    # --- reading and setting ----------------------------------------------------------------

    def settings(self, struct: type[S]) -> S:
        """Return the section of type ``struct``: its settings, typed (frozen: read them).

        ``config.settings(EnvRunnersSettings).num_env_runners`` is ``config.num_env_runners``
        as mypy and editors know it; an algorithm's section is found by its base too
        (``settings(TrainingSettings)`` on a PPOConfig gives its PPOTrainingSettings).
        """
        for values in self._values.values():
            if isinstance(values, struct):
                return values
        raise KeyError(f"{type(self).__name__} has no section of type {struct.__name__}")

    def _set(self, name: str, given: dict[str, Any]) -> Self:
        if self._is_frozen:
            setting = next(iter(given), name)
            raise AttributeError(
                f"Cannot set attribute ({setting}) of an already frozen AlgorithmConfig!"
            )
        current = self._values[name]
        values = self.sections[name].merge(current, given)
        self._values[name] = msgspec.structs.replace(current, **values)
        return self

    @classmethod
    def setting_infos(cls) -> Iterator[SettingInfo]:
        """Yield every setting's declaration, section by section."""
        for name, struct in cls.sections.items():
            yield from _infos(name, struct)

    def to_dict_by_section(self) -> dict[str, Any]:
        """Return the settings by section (values as set; callables as they are)."""
        return {name: msgspec.structs.asdict(values) for name, values in self._values.items()}

    def _copy_values(self) -> dict[str, Settings]:
        """Return the sections with their mutable values (dicts, lists) copied."""
        return {
            name: msgspec.structs.replace(
                values,
                **{
                    field: copy.deepcopy(value)
                    for field, value in msgspec.structs.asdict(values).items()
                    if isinstance(value, dict | list)
                },
            )
            for name, values in self._values.items()
        }

    # --- data in ----------------------------------------------------------------------------

    def update_from_dict(self, settings: Mapping[str, Any], *, where: str = "") -> Self:
        """Set settings from data: ``{"training": {"lr": 1e-3}}`` or flat ``{"lr": 1e-3}``.

        Values are decoded through the sections' types, as a config file's are: a name no
        section has, or a value of the wrong type, is a ConfigError naming it (prefixed with
        ``where``, e.g. the file). ``"training.lr"`` names a setting with its section.
        """
        by_section: dict[str, dict[str, Any]] = {}
        for key, value in settings.items():
            name, setting = self._locate(key, where)
            if setting is None:
                if not isinstance(value, Mapping):
                    prefix = f"{where}: " if where else ""
                    raise ConfigError(
                        f"{prefix}section {name!r} must be a table of settings, got {value!r}"
                    )
                by_section.setdefault(name, {}).update(value)
            else:
                by_section.setdefault(name, {})[setting] = value
        converted = {
            name: convert_section(name, self.sections[name], values, where)
            for name, values in by_section.items()
        }
        for name, values in converted.items():  # all decoded before any is set
            self._set(name, values)
        return self

    def _locate(self, key: str, where: str) -> tuple[str, str | None]:
        """Return (section, setting) for a key of ``update_from_dict``; setting None: a table."""
        if key in self.sections:
            return key, None
        name, dot, setting = key.rpartition(".")
        if dot and name in self.sections:
            return name, setting
        if key in self._section_of:
            return self._section_of[key], key
        hint = did_you_mean(key, [*self.sections, *self._section_of])
        prefix = f"{where}: " if where else ""
        raise ConfigError(
            f"{prefix}unknown setting {key!r}{hint}; a section ({', '.join(self.sections)}) "
            f"or a setting of one"
        )


@functools.cache
def _infos(name: str, struct: type[Settings]) -> tuple[SettingInfo, ...]:
    return tuple(setting_infos(name, struct))


def _derive(cls: type[ConfigSections]) -> None:
    """Derive ``cls.sections`` from its ``section`` declarations and an attribute per setting."""
    sections: dict[str, type[Settings]] = {}
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            if isinstance(value, section):
                sections[name] = value.struct
    cls.sections = sections
    cls._section_of = {field: name for name, s in sections.items() for field in s.__struct_fields__}
    for info in cls.setting_infos():
        if not hasattr(cls, info.name):  # a property of the class's own ("auto" values) wins
            setattr(cls, info.name, _attribute(info))


def _attribute(info: SettingInfo) -> property:
    name = info.name

    def get(self: ConfigSections) -> Any:
        return getattr(self._values[self._section_of[name]], name)

    def set_(self: ConfigSections, value: Any) -> None:
        self._set(self._section_of[name], {name: value})

    return property(get, set_, doc=info.doc)


_derive(ConfigSections)


def convert_section(
    name: str, struct: type[Settings], values: Mapping[str, Any], where: str = ""
) -> dict[str, Any]:
    """Decode ``values`` (data from a file or the command line) as settings of ``struct``.

    Returns the given settings only, converted to their types (a TOML integer for a float
    setting becomes a float). An unknown name or a value of the wrong type is a ConfigError
    naming it, prefixed by ``where`` (a file name, an option).
    """
    prefix = f"{where}: " if where else ""
    if not isinstance(values, Mapping):
        raise ConfigError(f"{prefix}section {name!r} must be a table of settings, got {values!r}")
    allowed = struct.__struct_fields__
    for key in values:
        if key not in allowed:
            hint = did_you_mean(str(key), allowed)
            raise ConfigError(
                f"{prefix}unknown {name}() setting {key!r}{hint}; allowed: {', '.join(allowed)}"
            )
    try:
        # Lax: a string "inf" (params.json's infinity) or "0.001" decodes as a float.
        converted = msgspec.convert(dict(values), struct, strict=False)
    except msgspec.ValidationError as exc:
        message, _, path = str(exc).partition(" - at `$.")
        setting = path.rstrip("`")
        raise ConfigError(f"{prefix}{name}.{setting}: {message[:1].lower()}{message[1:]}") from None
    return {key: getattr(converted, key) for key in values}
