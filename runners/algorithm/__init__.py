"""The Algorithm and what it owns: the surface that algorithm authors and the app import.

``Algorithm`` is imported on first use: its module makes Ray Tune's ``Trainable`` its base
when Ray Tune is installed, which takes seconds to import (``_tune.py`` says why).
"""

from typing import TYPE_CHECKING

from hookbus.events import on_first_use as _on_first_use

from ._checkpoint import (
    MAX_CHECKPOINT_BYTES as MAX_CHECKPOINT_BYTES,
    list_checkpoints as list_checkpoints,
    read_checkpoint as read_checkpoint,
)
from ._learner import (
    AnyLearner as AnyLearner,
    Learner as Learner,
    MultiLearner as MultiLearner,
)
from ._learning import LearnerSettings as LearnerSettings, Spaces as Spaces
from ._module_files import (
    MODULE_FILE as MODULE_FILE,
    MODULE_FORMAT as MODULE_FORMAT,
    MODULES_FOLDER as MODULES_FOLDER,
)
from ._results import ResultDraft as ResultDraft
from ._space_data import space_from_data as space_from_data, space_to_data as space_to_data
from ._stored_config import (
    StoredConfig as StoredConfig,
    config_from_record as config_from_record,
    hold_back_code as hold_back_code,
    read_stored_config as read_stored_config,
    refuse_held_back as refuse_held_back,
)
from ._structure import check_structure as check_structure
from ._tune import require_tune as require_tune

if TYPE_CHECKING:
    from ._algorithm import Algorithm as Algorithm

__all__ = (
    "MAX_CHECKPOINT_BYTES",
    "MODULES_FOLDER",
    "MODULE_FILE",
    "MODULE_FORMAT",
    "Algorithm",
    "AnyLearner",
    "Learner",
    "LearnerSettings",
    "MultiLearner",
    "ResultDraft",
    "Spaces",
    "StoredConfig",
    "check_structure",
    "config_from_record",
    "hold_back_code",
    "list_checkpoints",
    "read_checkpoint",
    "read_stored_config",
    "refuse_held_back",
    "require_tune",
    "space_from_data",
    "space_to_data",
)


__getattr__ = _on_first_use(__name__, {"Algorithm": ("._algorithm", "Algorithm")})
