"""The Algorithm's learner side: building the learner, and updates between the learner hooks."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio
import numpy as np

from hookbus.events import LearnerUpdateEnd, LearnerUpdateStart
from hookbus.kernel import ConfigError, Publisher

from ..config import DEFAULT_MODULE_ID

if TYPE_CHECKING:
    from ..config import AlgorithmConfig

__all__ = ("LearnerHost",)


class LearnerHost:
    """Build the Algorithm's learner and run its updates (mixed into ``Algorithm``)."""

    config: AlgorithmConfig[Any]
    learner: Any
    training_iteration: int
    _publisher: Publisher

    def build_learner(self, observation_space: Any, action_space: Any) -> Any:
        """Return the learner: an object with ``module``, ``update(episodes) -> stats``,
        ``get_state()`` and ``set_state()``. ``config.learner_class`` overrides it."""
        raise NotImplementedError

    def build_multi_agent_learner(self, spaces: Mapping[str, tuple[Any, Any]]) -> Any:
        """Return the learner of one module per policy (``spaces``: module id to its
        observation and action space), as ``MultiAgentLearner``. Algorithms that train
        multi-agent override it."""
        raise ConfigError(
            f"{type(self).__name__} does not support multi-agent training yet; use PPO, or "
            f"train a single agent (no policies, and an env that is not a MultiAgentEnv)"
        )

    async def update_learner(
        self,
        batch: Any,
        *,
        batch_size: int,
        update_index: int = 0,
        update: Callable[[Any], dict[str, float]] | None = None,
        module_id: str = DEFAULT_MODULE_ID,
        learner: Any = None,
    ) -> dict[str, float]:
        """Run one learner update in a worker thread, between the learner hooks.

        ``on_learner_update_start`` and ``on_learner_update_end`` run on the event loop,
        before and after ``update(batch)`` (``learner.update`` by default) runs in a worker
        thread, so a start handler's change to the learner (``learner.lr = x``) applies to
        this update. Returns the update's stats. With neither hook subscribed this is just
        the thread hop: no event, no copy of the batch or the stats.

        In a multi-agent run, one call updates one module: ``module_id`` goes into the
        events, and ``learner`` (that module's learner; ``self.learner`` by default) is
        what handlers get as ``learner``, its ``module`` as ``module``.
        """
        learner = self.learner if learner is None else learner
        run = learner.update if update is None else update
        if not self._learner_hooks_wanted():
            stats: dict[str, float] = await anyio.to_thread.run_sync(run, batch)
            return stats
        live = {"learner": learner, "module": learner.module, "batch": batch}
        fields = {
            "training_iteration": self.training_iteration + 1,  # the one in progress
            "module_id": module_id,
            "batch_size": batch_size,
            "update_index": update_index,
        }
        await self._publisher.publish(LearnerUpdateStart, live, **fields)
        stats = await anyio.to_thread.run_sync(run, batch)
        # Plain floats, copied: the event is recorded, and handlers cannot edit the stats.
        plain = {key: float(value) for key, value in stats.items()}
        await self._publisher.publish(LearnerUpdateEnd, live, stats=plain, **fields)
        return stats

    def _learner_hooks_wanted(self) -> bool:
        publisher = self._publisher
        return publisher.wants(LearnerUpdateStart) or publisher.wants(LearnerUpdateEnd)

    def learner_settings(self) -> dict[str, Any]:
        """Return the learner settings every algorithm shares: ``lr``, ``gamma``,
        ``model_hiddens`` and ``seed`` (a fresh random one when the config sets none)."""
        c = self.config
        seed = c.seed if c.seed is not None else int(np.random.default_rng().integers(2**31))
        return {
            "lr": c.lr,
            "gamma": c.gamma,
            "model_hiddens": tuple(c.model["fcnet_hiddens"]),
            "seed": seed,
        }

    def _make_learner(self, runner: Any) -> Any:
        """Build the learner for the local runner's spaces: one module, or one per policy.

        ``config.learner_class`` gets ``(config, observation_space, action_space)``, or with
        multi-agent ``(config, spaces)`` (module id to its two spaces).
        """
        learner_class = self.config.learner_class
        if getattr(runner, "is_multi_agent", False):
            if learner_class is not None:
                return learner_class(self.config, runner.spaces)
            return self.build_multi_agent_learner(runner.spaces)
        obs_space, act_space = runner.env.single_observation_space, runner.env.single_action_space
        if learner_class is not None:
            return learner_class(self.config, obs_space, act_space)
        return self.build_learner(obs_space, act_space)
