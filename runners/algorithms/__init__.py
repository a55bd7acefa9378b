"""The learning algorithms: shared numpy pieces, and one sub-package per algorithm."""

from ._multi_module import (
    MultiAgentLearner as MultiAgentLearner,
    MultiAgentModule as MultiAgentModule,
)

__all__ = ("MultiAgentLearner", "MultiAgentModule")
