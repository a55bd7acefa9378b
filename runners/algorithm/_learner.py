"""What trains: the Learner Protocols an Algorithm holds as ``algo.learner``.

``build_learner()`` (PPO's, DQN's) and ``training(learner_class=...)`` (a user's) give a
``Learner``: one module and an ``update(batch)`` that trains it. A multi-agent run holds a
``MultiLearner`` (``MultiAgentLearner``): one learner per module id. Nothing has to subclass
them; the Algorithm reads nothing else of a learner, and an algorithm that wants more says
so with a Protocol of its own (DQN's target network, docs/dqn.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypeVar, runtime_checkable

from .._rl_module import MultiRLModule, RLModule, Stateful

__all__ = ("AnyLearner", "Learner", "MultiLearner")

BatchT = TypeVar("BatchT", contravariant=True)


class Learner(Stateful, Protocol[BatchT]):
    """Train one module on batches of ``BatchT`` (PPO: episode chunks; DQN: replayed rows).

    ``get_state()`` / ``set_state()`` are what checkpoints hold of it: they must keep their
    structure (keys, array shapes, dtypes) over the learner's life (docs/runners.md).
    """

    @property
    def module(self) -> RLModule:
        """The module it trains: the EnvRunners act with it (in-process ones share it)."""
        ...

    def update(self, batch: BatchT, /) -> Mapping[str, float]:
        """Train on ``batch`` once; return the update's stats (``learners/<module id>/...``).

        Runs in a worker thread, between ``on_learner_update_start`` and ``..._end``.
        """
        ...


@runtime_checkable
class MultiLearner(Stateful, Protocol[BatchT]):
    """Train one learner per module id: a multi-agent run's ``algo.learner``.

    Its state is nested by module id; ``update(batch)`` returns each trained module's stats.
    """

    @property
    def module(self) -> MultiRLModule:
        """Every learner's module, by module id."""
        ...

    @property
    def learners(self) -> Mapping[str, Learner[Any]]:
        """Module id to that module's learner."""
        ...

    def update(self, batch: BatchT, /) -> Mapping[str, Mapping[str, float]]:
        """Train every module to train on its share of ``batch``; return stats by module id."""
        ...


AnyLearner = Learner[Any] | MultiLearner[Any]
"""What ``algo.learner`` is: a learner of one module, or one per module id."""
