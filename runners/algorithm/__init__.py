"""The Algorithm and what it owns: the surface that algorithm authors import."""

from ._algorithm import Algorithm as Algorithm
from ._checkpoint import list_checkpoints as list_checkpoints
from ._learner import (
    AnyLearner as AnyLearner,
    Learner as Learner,
    MultiLearner as MultiLearner,
)
from ._learning import LearnerSettings as LearnerSettings, Spaces as Spaces
from ._results import ResultDraft as ResultDraft
from ._stored_config import (
    StoredConfig as StoredConfig,
    read_stored_config as read_stored_config,
)
from ._structure import check_structure as check_structure
from ._tune import require_tune as require_tune

__all__ = (
    "Algorithm",
    "AnyLearner",
    "Learner",
    "LearnerSettings",
    "MultiLearner",
    "ResultDraft",
    "Spaces",
    "StoredConfig",
    "check_structure",
    "list_checkpoints",
    "read_stored_config",
    "require_tune",
)
