"""The hooks of an episode's life and of the env's creation, as an EnvRunner publishes them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hookbus.events import (
    EnvironmentCreated,
    EpisodeCreated,
    EpisodeEnd,
    EpisodeStart,
    PostprocessTrajectory,
)
from hookbus.kernel import MultiAgentEpisode, Publisher

from ..envs import env_name

__all__ = ("EpisodeLifecycle",)


class EpisodeLifecycle:
    """Publish ``on_episode_created/start/end``, ``on_postprocess_trajectory`` and
    ``on_environment_created`` for one EnvRunner: each hook from here, and only here.

    ``on_episode_step`` is the sampling loop's (``_steps.Sampling.publish_step``), the final
    step's included: it is the hot path, and ``on_episode_end`` follows it here (``ended``).
    """

    __slots__ = ("_publisher", "_runner")

    def __init__(self, publisher: Publisher, env_runner: Any) -> None:
        self._publisher = publisher
        self._runner = env_runner  # for its current module (the learner may set it later)

    def _episode_args(self, episode: Any) -> dict[str, Any]:
        """Return the episode hooks' live arguments besides the publisher's fixed ones."""
        return {
            "episode": episode,
            "rl_module": self._runner.module,
            "env_index": episode.env_index,
        }

    async def created(self, episode: Any) -> Any:
        """Publish ``on_episode_created`` for a new, empty ``episode``; return it."""
        publisher = self._publisher
        if publisher.wants(EpisodeCreated):
            await publisher.publish(
                EpisodeCreated,
                self._episode_args(episode),
                episode_id=episode.id_,
                env_index=episode.env_index,
                multi_agent=isinstance(episode, MultiAgentEpisode),
            )
        return episode

    async def started(
        self, episode: Any, fields: Callable[[], dict[str, Any]] | None = None
    ) -> None:
        """Publish ``on_episode_start`` once the reset is in ``episode``.

        ``fields()`` gives the event's fields of the reset (called only if someone
        listens); by default a single-agent episode's first observation and info.
        """
        publisher = self._publisher
        if publisher.wants(EpisodeStart):
            if fields is None:
                data = {"observation": episode.observations[0], "info": episode.infos[0]}
            else:
                data = fields()
            await publisher.publish(
                EpisodeStart,
                self._episode_args(episode),
                episode_id=episode.id_,
                env_index=episode.env_index,
                **data,
            )

    async def ended(self, episode: Any, early: bool) -> None:
        """Publish ``on_episode_end`` (after the final step's ``on_episode_step``), then
        ``on_postprocess_trajectory``.

        ``early``: a handler of the last step ended the episode (``Control.end_episode``).
        """
        publisher, i = self._publisher, episode.env_index
        if publisher.wants(EpisodeEnd):
            await publisher.publish(
                EpisodeEnd,
                self._episode_args(episode),
                episode_id=episode.id_,
                env_index=i,
                terminated=episode.is_terminated,
                truncated=episode.is_truncated,
                ended_early=early,
            )
        if publisher.wants(PostprocessTrajectory):
            await publisher.publish(
                PostprocessTrajectory, {"episode": episode}, episode_id=episode.id_, env_index=i
            )

    async def announce(self) -> None:
        """Publish ``on_environment_created`` for the runner's env."""
        runner, publisher = self._runner, self._publisher
        if publisher.wants(EnvironmentCreated):
            await publisher.publish(
                EnvironmentCreated,
                {"env_context": runner.env_context},
                env_id=env_name(runner.config.env),
                num_envs=runner.num_envs,
                worker_index=runner.worker_index,
                in_evaluation=runner.config.in_evaluation,
                env_config=dict(runner.env_context),
            )
