"""The hooks of an episode's life and of the env's creation, as an EnvRunner publishes them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hookbus.events import (
    EnvironmentCreated,
    EpisodeCreated,
    EpisodeEnd,
    EpisodeStart,
    EpisodeStep,
    PostprocessTrajectory,
)
from hookbus.kernel import Episode, MultiAgentEpisode, Publisher

from ..envs import EnvContext, env_name

if TYPE_CHECKING:
    from ..config import AlgorithmConfig

__all__ = ("EpisodeLifecycle",)


class EpisodeLifecycle:
    """Publish ``on_episode_created/start/step/end``, ``on_postprocess_trajectory`` and
    ``on_environment_created`` for the EnvRunner that mixes this in (per-step events of
    ongoing episodes are published by its sampling loop itself, the hot path).
    """

    _publisher: Publisher
    _announced: bool
    module: Any
    config: AlgorithmConfig[Any]
    env_context: EnvContext
    num_envs: int
    worker_index: int

    def _episode_args(self, episode: Any) -> dict[str, Any]:
        """Return the episode hooks' live arguments besides the publisher's fixed ones."""
        return {"episode": episode, "rl_module": self.module, "env_index": episode.env_index}

    def _make_episode(self, i: int) -> Any:
        """Return a new, empty episode for sub-env ``i``."""
        return Episode(env_index=i)

    async def _new_episode(self, i: int) -> Any:
        episode = self._make_episode(i)
        publisher = self._publisher
        if publisher.wants(EpisodeCreated):
            await publisher.publish(
                EpisodeCreated,
                self._episode_args(episode),
                episode_id=episode.id_,
                env_index=i,
                multi_agent=isinstance(episode, MultiAgentEpisode),
            )
        return episode

    async def _episode_started(self, episode: Any, fields: dict[str, Any] | None = None) -> None:
        """Publish ``on_episode_start``; ``fields`` are the reset's (a single-agent
        episode's first observation and info by default)."""
        publisher = self._publisher
        if publisher.wants(EpisodeStart):
            if fields is None:
                fields = {"observation": episode.observations[0], "info": episode.infos[0]}
            await publisher.publish(
                EpisodeStart,
                self._episode_args(episode),
                episode_id=episode.id_,
                env_index=episode.env_index,
                **fields,
            )

    async def _episode_ended(self, episode: Any, step: dict[str, Any] | None) -> None:
        """Publish the final step (already in ``episode``; ``step`` holds its event fields),
        then the episode's end.

        As in RLlib, the step that ends an episode fires ``on_episode_step`` like any other
        (with the episode already terminated or truncated), and ``on_episode_end`` after it.
        ``step`` None: a handler of the last (published) step ended the episode early.
        """
        publisher, i = self._publisher, episode.env_index
        args = self._episode_args(episode)
        ended = {"terminated": episode.is_terminated, "truncated": episode.is_truncated}
        if step is not None and publisher.wants(EpisodeStep):
            await publisher.publish(
                EpisodeStep,
                args,
                episode_id=episode.id_,
                env_index=i,
                **step,
                **ended,
            )
        if publisher.wants(EpisodeEnd):
            await publisher.publish(
                EpisodeEnd,
                args,
                episode_id=episode.id_,
                env_index=i,
                ended_early=step is None,
                **ended,
            )
        if publisher.wants(PostprocessTrajectory):
            await publisher.publish(
                PostprocessTrajectory, {"episode": episode}, episode_id=episode.id_, env_index=i
            )

    async def _announce(self) -> None:
        self._announced = True
        if self._publisher.wants(EnvironmentCreated):
            await self._publisher.publish(
                EnvironmentCreated,
                {"env_context": self.env_context},
                env_id=env_name(self.config.env),
                num_envs=self.num_envs,
                worker_index=self.worker_index,
                in_evaluation=self.config.in_evaluation,
                env_config=dict(self.env_context),
            )
