"""The Algorithm's learner side: the settings learners share, making the learner, and updates
between the learner hooks."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, final

import anyio
import gymnasium as gym
import numpy as np

from hookbus.events import LearnerUpdateEnd, LearnerUpdateStart
from hookbus.kernel import Publisher
from hookbus.metrics import MetricsLogger

from ..config import effective_model_config
from ..env_runner import EnvRunner, MultiAgentEnvRunner
from ..episodes import LearnerLoggers
from ._learner import AnyLearner, Learner, MultiLearner

if TYPE_CHECKING:
    from ..config import AlgorithmConfig

__all__ = ("LearnerSettings", "LearnerUpdates", "Spaces", "learner_settings", "make_learner")

B = TypeVar("B")

Spaces = Mapping[str, tuple[gym.Space[Any], gym.Space[Any]]]
"""Module id to its observation and action space (a multi-agent run's modules)."""


class LearnerSettings(TypedDict):
    """The settings every learner shares (``Algorithm.learner_settings()``)."""

    lr: float
    gamma: float
    model_hiddens: tuple[int, ...]
    model_activation: str
    seed: int


def learner_settings(config: AlgorithmConfig[Any]) -> LearnerSettings:
    """Return ``config``'s ``lr``, ``gamma``, the model's hidden layers and activation
    (``rl_module(model_config=...)`` over ``training(model=...)``) and ``seed`` (a fresh
    random one when the config sets none)."""
    seed = config.seed if config.seed is not None else int(np.random.default_rng().integers(2**31))
    model = effective_model_config(config.model, config.model_config)
    return {
        "lr": config.lr,
        "gamma": config.gamma,
        "model_hiddens": model.fcnet_hiddens,
        "model_activation": model.fcnet_activation,
        "seed": seed,
    }


def make_learner(
    config: AlgorithmConfig[Any],
    runner: EnvRunner,
    *,
    build: Callable[[gym.Space[Any], gym.Space[Any]], Learner[Any]],
    build_multi_agent: Callable[[Spaces], MultiLearner[Any]],
) -> AnyLearner:
    """Build the learner for the local runner's spaces: one module, or one per policy.

    ``config.learner_class`` gets ``(config, observation_space, action_space)``, or with
    multi-agent ``(config, spaces)`` (module id to its two spaces); without it, ``build``
    or ``build_multi_agent`` (the Algorithm's ``build_learner`` and
    ``build_multi_agent_learner``) makes it.
    """
    learner_class = config.learner_class
    if isinstance(runner, MultiAgentEnvRunner):
        if learner_class is not None:
            learner: AnyLearner = learner_class(config, runner.spaces)
            return learner
        return build_multi_agent(runner.spaces)
    # The module's observation space: a non-Box env's reaches it flattened (envs/_connectors).
    obs_space, act_space = runner.module_observation_space, runner.env.single_action_space
    if learner_class is not None:
        learner = learner_class(config, obs_space, act_space)
        return learner
    return build(obs_space, act_space)


@final
class LearnerUpdates:
    """Run learner updates in a worker thread, between the learner hooks of ``publisher``.

    ``on_learner_update_start`` and ``on_learner_update_end`` run on the event loop, before
    and after the update runs in a worker thread, so a start handler's change to the learner
    (``learner.lr = x``) applies to that update. With neither hook subscribed an update is
    just the thread hop: no event, no copy of the batch or the stats.
    """

    def __init__(self, publisher: Publisher, metrics: MetricsLogger) -> None:
        self._publisher = publisher  # the Algorithm's: its events, its seq
        # The hooks' ``metrics_logger`` is the module's learner logger, as in RLlib (its
        # Learner's ``metrics``); merged under ``learners/<module_id>`` after each update.
        self._loggers = LearnerLoggers(metrics)

    def hooks_wanted(self) -> bool:
        """Tell whether a learner hook has subscribers (else updates publish nothing)."""
        publisher = self._publisher
        return publisher.wants(LearnerUpdateStart) or publisher.wants(LearnerUpdateEnd)

    async def run(
        self,
        learner: AnyLearner,
        update: Callable[[B], Mapping[str, float]],
        batch: B,
        *,
        training_iteration: int,
        module_id: str,
        batch_size: int,
        update_index: int,
    ) -> Mapping[str, float]:
        """Return the stats of ``update(batch)``, run between the hooks.

        ``learner`` (and its ``module``) is what handlers get as ``learner`` (``module``);
        the other arguments go into the events (``training_iteration``: the one in progress).
        """
        if not self.hooks_wanted():
            return await anyio.to_thread.run_sync(update, batch)
        logger = self._loggers.logger(module_id)
        live = {
            "learner": learner,
            "module": learner.module,
            "batch": batch,
            "metrics_logger": logger,
        }
        fields = {
            "training_iteration": training_iteration,
            "module_id": module_id,
            "batch_size": batch_size,
            "update_index": update_index,
        }
        await self._publisher.publish(LearnerUpdateStart, live, **fields)
        stats = await anyio.to_thread.run_sync(update, batch)
        # Plain floats, copied: the event is recorded, and handlers cannot edit the stats.
        plain = {key: float(value) for key, value in stats.items()}
        await self._publisher.publish(LearnerUpdateEnd, live, stats=plain, **fields)
        self._loggers.update_done(module_id)  # beside the learner's own stats
        return stats
