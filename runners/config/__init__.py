"""The config room: AlgorithmConfig, every setting declared once, and the checks of values."""

from ._backend_names import BACKENDS as BACKENDS, check_backend as check_backend
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
from ._declarations import (
    NOT_SET as NOT_SET,
    Setting as Setting,
    SettingInfo as SettingInfo,
    Settings as Settings,
    check_values as check_values,
)
from ._model import (
    MODEL_KEYS as MODEL_KEYS,
    DefaultModelConfig as DefaultModelConfig,
    effective_model_config as effective_model_config,
)
from ._module_spec import (
    MultiRLModuleSpec as MultiRLModuleSpec,
    RandomRLModule as RandomRLModule,
    RLModuleSpec as RLModuleSpec,
    module_kind as module_kind,
)
from ._multi_agent import (
    DEFAULT_MODULE_ID as DEFAULT_MODULE_ID,
    DEFAULT_POLICY_ID as DEFAULT_POLICY_ID,
    PolicySpec as PolicySpec,
    is_multi_agent as is_multi_agent,
    mapping_fn as mapping_fn,
    module_spaces as module_spaces,
    module_spec as module_spec,
    policy_specs as policy_specs,
    set_multi_agent as set_multi_agent,
    trains_module as trains_module,
)
from ._network_bound import (
    MAX_PARAMETERS as MAX_PARAMETERS,
    check_module_parameters as check_module_parameters,
    mlp_parameters as mlp_parameters,
    show_hiddens as show_hiddens,
)
from ._sections import section as section
from ._settings import (
    EnvRunnersSettings as EnvRunnersSettings,
    EvaluationSettings as EvaluationSettings,
    ReportingSettings as ReportingSettings,
    TrainingSettings as TrainingSettings,
)
from ._table import settings_markdown as settings_markdown, settings_rows as settings_rows

__all__ = (
    "BACKENDS",
    "DEFAULT_MODULE_ID",
    "DEFAULT_POLICY_ID",
    "MAX_PARAMETERS",
    "MODEL_KEYS",
    "NOT_SET",
    "AlgorithmConfig",
    "Check",
    "DefaultModelConfig",
    "EnvRunnersSettings",
    "EvaluationSettings",
    "MultiRLModuleSpec",
    "PolicySpec",
    "RLModuleSpec",
    "RandomRLModule",
    "ReportingSettings",
    "Rule",
    "Setting",
    "SettingInfo",
    "Settings",
    "TrainingSettings",
    "boolean",
    "check_backend",
    "check_module_parameters",
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
    "mlp_parameters",
    "module_kind",
    "module_spaces",
    "module_spec",
    "number_above",
    "number_at_least",
    "number_in",
    "one_of",
    "optional",
    "policy_specs",
    "section",
    "set_multi_agent",
    "settings_markdown",
    "settings_rows",
    "show_hiddens",
    "trains_module",
)
