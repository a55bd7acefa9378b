"""PPO: the Algorithm that trains a PPOLearner on the EnvRunners' episodes."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Self

import numpy as np

from hookbus.kernel import ConfigError, Episode

from ...algorithm import Algorithm
from ...config import (
    DEFAULT_MODULE_ID,
    NOT_SET,
    AlgorithmConfig,
    Settings,
    given,
    int_at_least,
    trains_module,
)
from .._multi_module import MultiAgentLearner
from ._learner import PPOLearner, Trajectory
from ._settings import PPO_LEARNER_SETTINGS, PPOTrainingSettings

__all__ = ("PPO", "PPOConfig")


class PPOConfig(AlgorithmConfig["PPO"]):
    """Configure PPO: RLlib's setting names; defaults tuned for CartPole (see docs/runners.md)."""

    sections: ClassVar[dict[str, type[Settings]]] = {
        **AlgorithmConfig.sections,
        "training": PPOTrainingSettings,
    }

    # Declared for type checkers; set from the sections in __init__.
    lambda_: float
    clip_param: float
    vf_clip_param: float | None
    vf_loss_coeff: float
    entropy_coeff: float
    kl_coeff: float
    kl_target: float
    use_kl_loss: bool
    num_epochs: int
    minibatch_size: int
    grad_clip: float | None

    def training(
        self,
        *,
        lr: float = NOT_SET,
        gamma: float = NOT_SET,
        train_batch_size: int = NOT_SET,
        model: dict[str, Any] = NOT_SET,
        learner_class: type | None = NOT_SET,
        lambda_: float = NOT_SET,
        clip_param: float = NOT_SET,
        vf_clip_param: float | None = NOT_SET,
        vf_loss_coeff: float = NOT_SET,
        entropy_coeff: float = NOT_SET,
        kl_coeff: float = NOT_SET,
        kl_target: float = NOT_SET,
        use_kl_loss: bool = NOT_SET,
        num_epochs: int = NOT_SET,
        minibatch_size: int = NOT_SET,
        grad_clip: float | None = NOT_SET,
    ) -> Self:
        """Set the common training settings and PPO's (RLlib's names; docs/runners.md)."""
        return self._update("training", given(locals()))

    def validate(self) -> None:
        """Check the common settings, then PPO's, before anything starts."""
        super().validate()
        # Finite, or the weights silently turn NaN (vf_clip_param may be None or inf: no clipping).
        for name in ("lambda_", "clip_param", "vf_loss_coeff", "entropy_coeff", "kl_coeff"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigError(f"{name} must be a finite number, got {value!r}")
            if not math.isfinite(value):
                raise ConfigError(f"{name} must be a finite number, got {value!r}")
        int_at_least("minibatch_size", self.minibatch_size, 1)
        if self.minibatch_size > self.train_batch_size:
            raise ConfigError(
                f"minibatch_size ({self.minibatch_size}) must be <= train_batch_size "
                f"({self.train_batch_size}); lower minibatch_size or raise train_batch_size"
            )


class EpisodePPOLearner(PPOLearner):
    """A PPOLearner that takes the EnvRunners' episode chunks."""

    def update(self, episodes: Sequence[Any]) -> dict[str, float]:
        """Turn episode chunks into trajectories and run one PPO update."""
        return super().update(_trajectories(episodes))


class ModulePPOLearner(EpisodePPOLearner):
    """The PPOLearner of one module in a multi-agent run: small batches train too."""

    def update(self, episodes: Sequence[Any]) -> dict[str, float]:
        """Run one PPO update, in minibatches of ``min(minibatch_size, rows)`` rows.

        A module's share of a train batch may be smaller than ``minibatch_size`` (its
        agents stepped little, or it acted for one agent of many): that update then uses
        the whole batch as its one minibatch instead of raising. ``minibatch_size`` itself
        stays as set.
        """
        trajectories = _trajectories(episodes)
        rows = sum(len(tr.rewards) for tr in trajectories)
        full = self.minibatch_size
        self.minibatch_size = max(1, min(full, rows))
        try:
            return PPOLearner.update(self, trajectories)
        finally:
            self.minibatch_size = full


def _trajectories(episodes: Sequence[Any]) -> list[Trajectory]:
    return [
        ep if isinstance(ep, Trajectory) else _trajectory(ep)
        for ep in episodes
        if isinstance(ep, Trajectory) or len(ep)
    ]


def _trajectory(episode: Episode) -> Trajectory:
    return Trajectory(
        observations=np.asarray(episode.observations),
        actions=np.asarray(episode.actions),
        rewards=np.asarray(episode.rewards, dtype=np.float64),
        terminated=episode.is_terminated,
    )


class PPO(Algorithm):
    """Proximal Policy Optimization with a numpy MLP policy and value function."""

    def build_learner(self, observation_space: Any, action_space: Any) -> Any:
        """Build the PPOLearner from the config's training settings."""
        return self._ppo_learner(
            EpisodePPOLearner, observation_space, action_space, self.learner_settings()
        )

    def build_multi_agent_learner(self, spaces: Mapping[str, tuple[Any, Any]]) -> MultiAgentLearner:
        """Build a PPO learner per module id in ``spaces``, with ``build_learner``'s settings.

        Module k (in the order of ``spaces``) is seeded ``seed + k``; ``policies_to_train``
        decides which modules an update trains. Each module's update uses minibatches of
        ``min(minibatch_size, rows)`` rows, so a module with little data still trains.
        """
        shared = self.learner_settings()
        seed = shared.pop("seed")

        def make(module_id: str, obs_space: Any, act_space: Any, seed: int) -> Any:
            return self._ppo_learner(
                ModulePPOLearner, obs_space, act_space, {**shared, "seed": seed}
            )

        config = self.config
        return MultiAgentLearner(
            spaces, make, seed=seed, trains=functools.partial(trains_module, config)
        )

    def _ppo_learner(
        self, cls: type[PPOLearner], obs_space: Any, act_space: Any, common: dict[str, Any]
    ) -> PPOLearner:
        settings = {name: getattr(self.config, name) for name in PPO_LEARNER_SETTINGS}
        try:
            return cls(obs_space, act_space, **common, **settings)
        except ValueError as exc:
            raise ConfigError(f"bad PPO setting: {exc}") from exc

    async def training_step(self) -> None:
        """Sample a train batch, update the learner on it, send the new weights out."""
        group, config, metrics = self.env_runner_group, self.config, self.metrics
        with metrics.log_time(("timers", "env_runner_sampling_timer")):
            episodes = await group.sample(config.train_batch_size)
        metrics.aggregate(await group.get_metrics(), key="env_runners")
        metrics.log_value("num_env_steps_sampled_lifetime", sum(map(len, episodes)), reduce="sum")
        with metrics.log_time(("timers", "learner_update_timer")):
            # Off the event loop's thread, so an embedding service stays responsive; the
            # learner hooks' handlers run on the loop, before and after (timed with it).
            if isinstance(self.learner, MultiAgentLearner):
                await self._update_modules(self.learner, episodes)
            else:
                stats = await self.update_learner(episodes, batch_size=sum(map(len, episodes)))
                metrics.log_dict(stats, key=("learners", DEFAULT_MODULE_ID), reduce="item")
        with metrics.log_time(("timers", "synch_weights")):
            await group.sync_weights(self.learner.module.get_state())

    async def _update_modules(self, learner: MultiAgentLearner, episodes: list[Any]) -> None:
        """Update each module to train that has data, one after the other (RLlib's keys:
        ``learners/<module_id>/...``); each update is between its own learner hooks."""
        for module_id, batch in learner.train_batches(episodes).items():
            module_learner = learner.learners[module_id]
            stats = await self.update_learner(
                batch,
                batch_size=sum(map(len, batch)),
                module_id=module_id,
                learner=module_learner,
                update=module_learner.update,
            )
            self.metrics.log_dict(stats, key=("learners", module_id), reduce="item")


PPOConfig.algo_class = PPO
