"""PPO: the Algorithm that trains a PPOLearner on the EnvRunners' episodes.

Imported on first use of ``PPO`` (``PPOConfig.algo_class`` included), never by importing
the package: an Algorithm class's module imports Ray Tune when it is installed.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from hookbus.events import publish_names
from hookbus.kernel import ConfigError

from ...algorithm import Algorithm, Learner, LearnerSettings, Spaces
from ...config import (
    DEFAULT_MODULE_ID,
    AlgorithmConfig,
    RLModuleSpec,
    effective_model_config,
    module_kind,
    module_spec,
    policy_specs,
    trains_module,
)
from ...episodes import Episode, MultiAgentEpisode
from .._multi_module import ActingLearner, MultiAgentLearner
from ._learner import PPOLearner, Trajectory
from ._module import PPOModule

__all__ = ("PPO",)


Chunks = Sequence[Episode | Trajectory]
"""What PPO's learners train on: the EnvRunners' episode chunks (or ready trajectories)."""


def _stacked_observations(episode: Episode) -> NDArray[Any]:
    """Return an episode's observations as one array (no env-to-module pipeline)."""
    return np.asarray(episode.observations)


class EpisodePPOLearner(PPOLearner):
    """A PPOLearner that takes the EnvRunners' episode chunks.

    Episodes hold the env's observations; ``observations`` turns an episode's into the
    module's (the local runner's ``episode_observations``: its env-to-module pipeline, set
    by the Algorithm; in a multi-agent run the episode is an agent's, whose ``agent_id``
    picks its pipeline).
    """

    observations: Callable[[Any], NDArray[Any]] = staticmethod(_stacked_observations)

    def update(self, episodes: Chunks) -> dict[str, float]:
        """Turn episode chunks into trajectories and run one PPO update."""
        return super().update(_trajectories(episodes, self.observations))


class ModulePPOLearner(EpisodePPOLearner):
    """The PPOLearner of one module in a multi-agent run: small batches train too."""

    def update(self, episodes: Chunks) -> dict[str, float]:
        """Run one PPO update, in minibatches of ``min(minibatch_size, rows)`` rows.

        A module's share of a train batch may be smaller than ``minibatch_size`` (its
        agents stepped little, or it acted for one agent of many): that update then uses
        the whole batch as its one minibatch instead of raising. ``minibatch_size`` itself
        stays as set.
        """
        trajectories = _trajectories(episodes, self.observations)
        rows = sum(len(tr.rewards) for tr in trajectories)
        full = self.minibatch_size
        self.minibatch_size = max(1, min(full, rows))
        try:
            return PPOLearner.update(self, trajectories)
        finally:
            self.minibatch_size = full


def _trajectories(
    episodes: Chunks, observations: Callable[[Any], NDArray[Any]]
) -> list[Trajectory]:
    return [
        ep if isinstance(ep, Trajectory) else _trajectory(ep, observations)
        for ep in episodes
        if isinstance(ep, Trajectory) or len(ep)
    ]


def _trajectory(episode: Episode, observations: Callable[[Any], NDArray[Any]]) -> Trajectory:
    return Trajectory(
        observations=observations(episode),
        actions=np.asarray(episode.actions),
        rewards=np.asarray(episode.rewards, dtype=np.float64),
        terminated=episode.is_terminated,
    )


class PPO(Algorithm):
    """Proximal Policy Optimization with a numpy MLP policy and value function."""

    def build_learner(
        self, observation_space: gym.Space[Any], action_space: gym.Space[Any]
    ) -> PPOLearner:
        """Build the PPOLearner from the config's training settings (and the model_config
        of ``rl_module(rl_module_spec=RLModuleSpec(...))``, if it has one)."""
        config, spec = self.config, self.config.rl_module_spec
        if isinstance(spec, RLModuleSpec):
            if module_kind(spec, PPOModule) == "class":
                raise ConfigError(
                    f"rl_module_spec's module class {spec.module_class.__qualname__} "  # type: ignore[union-attr]
                    f"cannot be trained by PPO's learner, which trains its own module; a "
                    f"module class of your own acts for a policy that is not trained "
                    f"(docs/multi_agent.md)"
                )
            if spec.model_config:
                config = config.copy(copy_frozen=False)
                config.rl_module(model_config={**config.model_config, **spec.model_config})
        settings = self.learner_settings()
        model = effective_model_config(config.model, config.model_config)
        settings["model_hiddens"] = model.fcnet_hiddens
        settings["model_activation"] = model.fcnet_activation
        return self._ppo_learner(
            EpisodePPOLearner, observation_space, action_space, settings, config
        )

    def build_multi_agent_learner(self, spaces: Spaces) -> MultiAgentLearner:
        """Build a learner per module id in ``spaces``, with ``build_learner``'s settings.

        Module k (in the order of ``spaces``) is seeded ``seed + k``; ``policies_to_train``
        decides which modules an update trains. Each module's update uses minibatches of
        ``min(minibatch_size, rows)`` rows, so a module with little data still trains.
        A module's ``RLModuleSpec`` (``config.rl_module(rl_module_spec=...)``) and its
        ``PolicySpec(config=...)`` overrides shape it (``build_module_learner``).
        """
        config = self.config
        policies = policy_specs(config)

        def make(
            module_id: str, obs_space: gym.Space[Any], act_space: gym.Space[Any], seed: int
        ) -> Learner[Sequence[Episode]]:
            spec = module_spec(config, module_id) or RLModuleSpec()
            spec = dataclasses.replace(spec, observation_space=obs_space, action_space=act_space)
            overrides = policies[module_id].config if module_id in policies else None
            learner = self.build_module_learner(
                module_id, spec, seed=seed, config_overrides=overrides
            )
            if isinstance(learner, ActingLearner) and trains_module(config, module_id):
                raise ConfigError(
                    f"policy {module_id!r}: its module class "
                    f"{type(learner.module).__qualname__} acts and is never trained; leave "
                    f"it out of policies_to_train (multi_agent(policies_to_train=[...]))"
                )
            return learner

        return MultiAgentLearner(
            spaces,
            make,
            seed=self.learner_settings()["seed"],
            trains=functools.partial(trains_module, config),
        )

    def build_module_learner(
        self,
        module_id: str,
        spec: RLModuleSpec,
        *,
        seed: int,
        config_overrides: Mapping[str, Any] | None = None,
    ) -> Learner[Sequence[Episode]]:
        """Return the learner of module ``module_id``, built from ``spec`` (spaces set).

        A spec of PPO's own module (``module_class`` None or ``PPOModule``) gets a PPO
        learner: the config's training settings with ``config_overrides`` applied
        (``PolicySpec(config=PPOConfig.overrides(lr=...))``) and the spec's
        ``model_config`` over the config's. A class of the user's own gets an
        ``ActingLearner``: it acts, and is never trained.
        """
        if spec.observation_space is None or spec.action_space is None:
            raise ConfigError(f"policy {module_id!r}: its RLModuleSpec has no spaces")
        try:
            if module_kind(spec, PPOModule) == "class":
                return ActingLearner(module_id, spec.build())
            config = self.config
            if config_overrides or spec.model_config:
                config = config.copy(copy_frozen=False).update_from_dict(
                    dict(config_overrides or {}), where=f"policy {module_id!r}'s overrides"
                )
                config.rl_module(model_config={**config.model_config, **(spec.model_config or {})})
            model = effective_model_config(config.model, config.model_config)
            settings: LearnerSettings = {
                "lr": config.lr,
                "gamma": config.gamma,
                "model_hiddens": model.fcnet_hiddens,
                "model_activation": model.fcnet_activation,
                "seed": seed,
            }
            return self._ppo_learner(
                ModulePPOLearner, spec.observation_space, spec.action_space, settings, config
            )
        except ConfigError as exc:  # e.g. an agent's action space PPO does not take
            raise ConfigError(f"policy {module_id!r}: {exc}") from exc

    def _ppo_learner(
        self,
        cls: type[EpisodePPOLearner],
        obs_space: gym.Space[Any],
        act_space: gym.Space[Any],
        common: LearnerSettings,
        config: AlgorithmConfig[Any] | None = None,
    ) -> EpisodePPOLearner:
        config = self.config if config is None else config
        model = effective_model_config(config.model, config.model_config)
        try:
            learner = cls(
                obs_space,
                act_space,
                config,
                model_hiddens=common["model_hiddens"],
                model_activation=common["model_activation"],
                vf_share_layers=model.vf_share_layers,
                seed=common["seed"],
            )
        except ValueError as exc:
            raise ConfigError(f"bad PPO setting: {exc}") from exc
        learner.observations = self.env_runner.episode_observations
        return learner

    async def atraining_step(self) -> None:
        """Sample a train batch, update the learner on it, send the new weights out."""
        group, config, metrics = self.env_runner_group, self.config, self.metrics
        with metrics.log_time(("timers", "env_runner_sampling_timer")):
            episodes = await group.sample(config.train_batch_size)
        metrics.aggregate(await group.get_metrics(), key="env_runners")
        metrics.log_value("num_env_steps_sampled_lifetime", sum(map(len, episodes)), reduce="sum")
        with metrics.log_time(("timers", "learner_update_timer")):
            # Off the event loop's thread, so an embedding service stays responsive; the
            # learner hooks' handlers run on the loop, before and after (timed with it).
            learner = self.learner
            if isinstance(learner, MultiAgentLearner):
                await self._update_modules(learner, episodes)
            else:
                stats = await self.update_learner(episodes, batch_size=sum(map(len, episodes)))
                metrics.log_dict(stats, key=("learners", DEFAULT_MODULE_ID), reduce="item")
        with metrics.log_time(("timers", "synch_weights")):
            await group.sync_weights(self.learner.module.get_state())

    async def _update_modules(
        self, learner: MultiAgentLearner, episodes: Sequence[Episode | MultiAgentEpisode]
    ) -> None:
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


# The class reports its public home, ``hookbus.runners``, from the moment it exists, however
# it was first reached; pickling by reference looks it up there (``runners.__getattr__``).
publish_names("hookbus.runners", globals(), __all__)
