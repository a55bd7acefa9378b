"""What setting an Algorithm up makes and stopping it ends: its runner groups, its learner,
its evaluation, and where it is in its life (``Lifecycle``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from hookbus.events import AlgorithmInit

from .._errors import AlgorithmStateError
from ..fleet import EnvRunnerGroup
from ._facade import in_loop_error
from ._learning import make_learner
from ._lifecycle import Lifecycle

if TYPE_CHECKING:
    import gymnasium as gym

    from hookbus.kernel import Bus, Publisher

    from ..config import AlgorithmConfig
    from ._evaluation import Evaluation
    from ._facade import SyncFacade
    from ._learner import AnyLearner, Learner, MultiLearner
    from ._learning import Spaces

__all__ = ("NOT_SET_UP", "Setup")

NOT_SET_UP = "the Algorithm is not set up yet: use `async with config.build() as algo`"


class Setup:
    """Set an Algorithm's parts up, hold them, stop them.

    Handed what it needs by the Algorithm: the config, the bus (closed at the end if the
    Algorithm made it), the publisher, the sync facade (its loop runs the runners), the
    Algorithm's learner builders and a maker of its ``Evaluation``.
    """

    def __init__(
        self,
        config: AlgorithmConfig[Any],
        bus: Bus,
        publisher: Publisher,
        sync: SyncFacade,
        *,
        owns_bus: bool,
        build_learner: Callable[[gym.Space[Any], gym.Space[Any]], Learner[Any]],
        build_multi_agent_learner: Callable[[Spaces], MultiLearner[Any]],
        make_evaluation: Callable[[], Evaluation],
    ) -> None:
        self._config = config
        self._bus = bus
        self._publisher = publisher
        self._sync = sync
        self._owns_bus = owns_bus
        self._build_learner = build_learner
        self._build_multi_agent_learner = build_multi_agent_learner
        self._make_evaluation = make_evaluation
        self.lifecycle = Lifecycle.BUILT
        self.learner: AnyLearner | None = None
        self.group: EnvRunnerGroup | None = None
        """The training runners (None until set up)."""
        self.evaluation: Evaluation | None = None
        """The evaluation rounds and runners (None until something evaluates)."""

    async def asetup(self, algorithm_name: str) -> None:
        """Make the runners and their envs, the learner; publish ``on_algorithm_init``."""
        if self.lifecycle is not Lifecycle.BUILT:
            raise AlgorithmStateError(f"cannot set up an Algorithm that is {self.lifecycle}")
        try:
            await self._make_parts()
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.astop()  # end any worker process that did start
            raise
        self.lifecycle = Lifecycle.READY
        await self._publisher.publish(AlgorithmInit, algorithm=algorithm_name)

    async def _make_parts(self) -> None:
        self._sync.set_up_in_caller_loop()  # unless in its own loop (then only async use)
        config = self._config
        group = EnvRunnerGroup(
            config, bus=self._bus, loop=self._sync.loop, publisher=self._publisher
        )
        self.group = group
        self.learner = make_learner(
            config,
            group.local_env_runner,
            build=self._build_learner,
            build_multi_agent=self._build_multi_agent_learner,
        )
        group.set_module(self.learner.module)
        await group.setup()
        if config.evaluation_interval or config.evaluation_num_env_runners:
            await self.start_evaluation()

    async def start_evaluation(self) -> Evaluation:
        """Make the evaluation runners (kept before their setup: if it fails halfway,
        ``astop()`` still ends what did start)."""
        self.evaluation = evaluation = self._make_evaluation()
        await evaluation.setup()
        return evaluation

    async def astop(self) -> None:
        """Stop the runners (closing envs and workers) and, if the Algorithm made it, the bus."""
        if self.lifecycle is Lifecycle.STOPPED:
            return
        self.lifecycle = Lifecycle.STOPPED
        if self.evaluation is not None:
            await self.evaluation.astop()
        if self.group is not None:
            await self.group.astop()
        if self._owns_bus:
            self._bus.close()

    def stop(self) -> None:
        """Stop from sync code: in the Algorithm's own loop, then end that loop."""
        if self._sync.loop is not None:
            self._sync.close(self.astop)
        elif self.lifecycle is Lifecycle.BUILT:  # never set up (built inside a loop, unused)
            self.lifecycle = Lifecycle.STOPPED
            if self._owns_bus:
                self._bus.close()
        elif self.lifecycle is not Lifecycle.STOPPED:
            raise in_loop_error("stop", "astop")

    def require(self, lifecycle: Lifecycle, action: str) -> None:
        """Raise AlgorithmStateError unless the Algorithm is at ``lifecycle``."""
        if self.lifecycle is not lifecycle:
            built = self.lifecycle is Lifecycle.BUILT
            hint = " (use `async with config.build() as algo`)" if built else ""
            raise AlgorithmStateError(f"cannot {action}: the Algorithm is {self.lifecycle}{hint}")

    def runner_groups(self) -> list[EnvRunnerGroup]:
        """The groups that exist: training, then evaluation."""
        evaluation = None if self.evaluation is None else self.evaluation.group
        return [group for group in (self.group, evaluation) if group is not None]

    def ready_group(self) -> EnvRunnerGroup:
        """The training runners, or AlgorithmStateError before setup."""
        if self.group is None:
            raise AlgorithmStateError(NOT_SET_UP)
        return self.group

    def ready_learner(self) -> AnyLearner:
        """The learner, or AlgorithmStateError before setup."""
        if self.learner is None:
            raise AlgorithmStateError(NOT_SET_UP)
        return self.learner
