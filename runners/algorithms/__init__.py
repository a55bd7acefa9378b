"""The learning algorithms: shared numpy pieces, and one sub-package per algorithm."""

from ._module_loading import load_module_checkpoint as load_module_checkpoint
from ._multi_module import (
    MultiAgentLearner as MultiAgentLearner,
    MultiAgentModule as MultiAgentModule,
)
from ._registry import ALGORITHMS as ALGORITHMS, get_trainable_cls as get_trainable_cls

__all__ = (
    "ALGORITHMS",
    "MultiAgentLearner",
    "MultiAgentModule",
    "get_trainable_cls",
    "load_module_checkpoint",
)
