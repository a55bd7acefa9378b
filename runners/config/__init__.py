"""The config room: AlgorithmConfig, its sections' settings and their checks."""

from ._checks import int_at_least as int_at_least
from ._config import AlgorithmConfig as AlgorithmConfig
from ._multi_agent import (
    DEFAULT_MODULE_ID as DEFAULT_MODULE_ID,
    PolicySpec as PolicySpec,
    is_multi_agent as is_multi_agent,
    mapping_fn as mapping_fn,
    module_spaces as module_spaces,
    trains_module as trains_module,
)
from ._settings import (
    NOT_SET as NOT_SET,
    EvaluationSettings as EvaluationSettings,
    ReportingSettings as ReportingSettings,
    Settings as Settings,
    TrainingSettings as TrainingSettings,
    given as given,
)

__all__ = (
    "DEFAULT_MODULE_ID",
    "NOT_SET",
    "AlgorithmConfig",
    "EvaluationSettings",
    "PolicySpec",
    "ReportingSettings",
    "Settings",
    "TrainingSettings",
    "given",
    "int_at_least",
    "is_multi_agent",
    "mapping_fn",
    "module_spaces",
    "trains_module",
)
