"""The learning algorithms: shared numpy pieces, and one sub-package per algorithm."""

from ._multi_module import (
    MultiAgentLearner as MultiAgentLearner,
    MultiAgentModule as MultiAgentModule,
)
from ._registry import ALGORITHMS as ALGORITHMS, get_trainable_cls as get_trainable_cls

__all__ = ("ALGORITHMS", "MultiAgentLearner", "MultiAgentModule", "get_trainable_cls")
