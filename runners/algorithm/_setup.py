"""Setting the Algorithm up and stopping it: ``asetup()`` and ``astop()``, ``stop()``, the
sync and async context managers, and the lifecycle check every other method makes."""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import anyio

from hookbus.events import AlgorithmInit

from .._errors import AlgorithmStateError
from ..fleet import EnvRunnerGroup
from ._evaluation import Evaluation
from ._facade import in_loop_error
from ._learning import make_learner
from ._lifecycle import Lifecycle

if TYPE_CHECKING:
    import gymnasium as gym

    from hookbus.kernel import Bus, Publisher
    from hookbus.metrics import MetricsLogger

    from ..config import AlgorithmConfig
    from ._facade import SyncFacade
    from ._learner import AnyLearner, Learner, MultiLearner
    from ._learning import Spaces

__all__ = ("SetupAndStop",)


class SetupAndStop:
    """Set an Algorithm up and stop it (a base of ``Algorithm``; it uses the names below)."""

    if TYPE_CHECKING:  # what the Algorithm provides
        config: AlgorithmConfig[Any]
        bus: Bus
        metrics: MetricsLogger
        _owns_bus: bool
        _lifecycle: Lifecycle
        _publisher: Publisher
        _sync: SyncFacade
        _learner: AnyLearner | None
        _env_runner_group: EnvRunnerGroup | None
        _evaluation: Evaluation | None
        _tune_trial: bool
        training_iteration: int  # a property of the Algorithm's, with a setter

        @property
        def learner(self) -> AnyLearner: ...
        def build_learner(
            self, observation_space: gym.Space[Any], action_space: gym.Space[Any]
        ) -> Learner[Any]: ...
        def build_multi_agent_learner(self, spaces: Spaces) -> MultiLearner[Any]: ...
        def _tune_call(self, name: str, *args: Any, **kwargs: Any) -> Any: ...

    async def asetup(self) -> None:
        """Make the runners and their envs, the learner; publish ``on_algorithm_init``."""
        if self._lifecycle is not Lifecycle.BUILT:
            raise AlgorithmStateError(f"cannot set up an Algorithm that is {self._lifecycle}")
        try:
            await self._setup()
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.astop()  # end any worker process that did start
            raise
        self._lifecycle = Lifecycle.READY
        await self._publisher.publish(AlgorithmInit, algorithm=type(self).__name__)

    async def _setup(self) -> None:
        self._sync.set_up_in_caller_loop()  # unless in its own loop (then only async use)
        config = self.config
        group = EnvRunnerGroup(
            config, bus=self.bus, loop=self._sync.loop, publisher=self._publisher
        )
        self._env_runner_group = group
        self._learner = make_learner(
            config,
            group.local_env_runner,
            build=self.build_learner,
            build_multi_agent=self.build_multi_agent_learner,
        )
        group.set_module(self._learner.module)
        await group.setup()
        if config.evaluation_interval or config.evaluation_num_env_runners:
            await self._start_evaluation()

    async def _start_evaluation(self) -> Evaluation:
        # Kept before setup: if setup fails halfway, astop() still ends what did start.
        self._evaluation = evaluation = Evaluation(self, self._publisher, loop=self._sync.loop)
        await evaluation.setup()
        return evaluation

    async def astop(self) -> None:
        """Stop the runners (closing envs and workers) and, if this Algorithm made it, the bus."""
        if self._lifecycle is Lifecycle.STOPPED:
            return
        self._lifecycle = Lifecycle.STOPPED
        if self._evaluation is not None:
            await self._evaluation.astop()
        if self._env_runner_group is not None:
            await self._env_runner_group.astop()
        if self._owns_bus:
            self.bus.close()

    async def __aenter__(self) -> Self:
        if self._lifecycle is Lifecycle.BUILT:
            await self.asetup()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.astop()

    # --- the sync twin, and the sync context manager ----------------------------------------

    def stop(self) -> None:
        """Stop the Algorithm and its event loop (sync twin of ``astop()``)."""
        if self._tune_trial:  # Tune's stop() calls cleanup(), which stops as below
            self._tune_call("stop")
            return
        self._stop_algorithm()

    def _stop_algorithm(self) -> None:
        if self._sync.loop is not None:
            self._sync.close(self.astop)
        elif self._lifecycle is Lifecycle.BUILT:  # never set up (built inside a loop, unused)
            self._lifecycle = Lifecycle.STOPPED
            if self._owns_bus:
                self.bus.close()
        elif self._lifecycle is not Lifecycle.STOPPED:
            raise in_loop_error("stop", "astop")

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _require(self, lifecycle: Lifecycle, action: str) -> None:
        if self._lifecycle is not lifecycle:
            built = self._lifecycle is Lifecycle.BUILT
            hint = " (use `async with config.build() as algo`)" if built else ""
            raise AlgorithmStateError(f"cannot {action}: the Algorithm is {self._lifecycle}{hint}")
