"""PPO: the Algorithm that trains a PPOLearner on the EnvRunners' episodes.

Imported on first use of ``PPO`` (``PPOConfig.algo_class`` included), never by importing
the package: an Algorithm class's module imports Ray Tune when it is installed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from hookbus.events._public import publish_names
from hookbus.kernel import ConfigError

from ...algorithm import Algorithm, Learner, LearnerSettings, Spaces
from ...config import DEFAULT_MODULE_ID, effective_model_config, trains_module
from ...episodes import Episode, MultiAgentEpisode
from .._multi_module import MultiAgentLearner
from ._learner import PPOLearner, Trajectory

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
        """Build the PPOLearner from the config's training settings."""
        return self._ppo_learner(
            EpisodePPOLearner, observation_space, action_space, self.learner_settings()
        )

    def build_multi_agent_learner(self, spaces: Spaces) -> MultiAgentLearner:
        """Build a PPO learner per module id in ``spaces``, with ``build_learner``'s settings.

        Module k (in the order of ``spaces``) is seeded ``seed + k``; ``policies_to_train``
        decides which modules an update trains. Each module's update uses minibatches of
        ``min(minibatch_size, rows)`` rows, so a module with little data still trains.
        """
        shared = self.learner_settings()

        def make(
            module_id: str, obs_space: gym.Space[Any], act_space: gym.Space[Any], seed: int
        ) -> Learner[Sequence[Episode]]:
            settings = shared.copy()
            settings["seed"] = seed
            try:
                return self._ppo_learner(ModulePPOLearner, obs_space, act_space, settings)
            except ConfigError as exc:  # e.g. an agent's action space PPO does not take
                raise ConfigError(f"policy {module_id!r}: {exc}") from exc

        config = self.config
        return MultiAgentLearner(
            spaces, make, seed=shared["seed"], trains=functools.partial(trains_module, config)
        )

    def _ppo_learner(
        self,
        cls: type[EpisodePPOLearner],
        obs_space: gym.Space[Any],
        act_space: gym.Space[Any],
        common: LearnerSettings,
    ) -> EpisodePPOLearner:
        config = self.config
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
