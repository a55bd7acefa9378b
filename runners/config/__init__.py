"""The config room: AlgorithmConfig, every setting declared once, and the checks of values."""

from ._checks import (
    Check as Check,
    Rule as Rule,
    boolean as boolean,
    finite as finite,
    finite_above as finite_above,
    finite_at_least as finite_at_least,
    int_at_least as int_at_least,
    int_check as int_check,
    is_callable as is_callable,
    number_above as number_above,
    number_at_least as number_at_least,
    number_in as number_in,
    one_of as one_of,
    optional as optional,
)
from ._config import AlgorithmConfig as AlgorithmConfig
from ._model import (
    MODEL_KEYS as MODEL_KEYS,
    DefaultModelConfig as DefaultModelConfig,
    effective_model_config as effective_model_config,
)
from ._multi_agent import (
    DEFAULT_MODULE_ID as DEFAULT_MODULE_ID,
    PolicySpec as PolicySpec,
    is_multi_agent as is_multi_agent,
    mapping_fn as mapping_fn,
    module_spaces as module_spaces,
    trains_module as trains_module,
)
from ._sections import section as section
from ._settings import (
    NOT_SET as NOT_SET,
    EnvRunnersSettings as EnvRunnersSettings,
    EvaluationSettings as EvaluationSettings,
    ReportingSettings as ReportingSettings,
    Setting as Setting,
    SettingInfo as SettingInfo,
    Settings as Settings,
    TrainingSettings as TrainingSettings,
    check_values as check_values,
)
from ._table import settings_markdown as settings_markdown, settings_rows as settings_rows

__all__ = (
    "DEFAULT_MODULE_ID",
    "MODEL_KEYS",
    "NOT_SET",
    "AlgorithmConfig",
    "Check",
    "DefaultModelConfig",
    "EnvRunnersSettings",
    "EvaluationSettings",
    "PolicySpec",
    "ReportingSettings",
    "Rule",
    "Setting",
    "SettingInfo",
    "Settings",
    "TrainingSettings",
    "boolean",
    "check_values",
    "effective_model_config",
    "finite",
    "finite_above",
    "finite_at_least",
    "int_at_least",
    "int_check",
    "is_callable",
    "is_multi_agent",
    "mapping_fn",
    "module_spaces",
    "number_above",
    "number_at_least",
    "number_in",
    "one_of",
    "optional",
    "section",
    "settings_markdown",
    "settings_rows",
    "trains_module",
)
