"""The hooks of an episode's life and of the env's creation, as an EnvRunner publishes them."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

from hookbus.events import (
    BaseEvent,
    EnvironmentCreated,
    EpisodeCreated,
    EpisodeEnd,
    EpisodeStart,
    PostprocessTrajectory,
)
from hookbus.kernel import Dispatcher, Publisher

from ..envs import env_name
from ..episodes import Episode, MultiAgentEpisode

if TYPE_CHECKING:
    from ..episodes import EpisodeLike
    from ._env_runner import EnvRunner

__all__ = ("EpisodeLifecycle",)

E = TypeVar("E", bound="EpisodeLike")


class EpisodeLifecycle:
    """Publish ``on_episode_created/start/end``, ``on_postprocess_trajectory`` and
    ``on_environment_created`` for one EnvRunner: each hook from here, and only here.

    ``on_episode_step`` is the sampling loop's (``_steps.Sampling.publish_step``), the final
    step's included: it is the hot path, and ``on_episode_end`` follows it here (``ended``).

    The episode hooks run as the step hook does: the held dispatcher's chain called with
    the live arguments in ``kernel.LIVE_ARGS`` order, no keyword dict built (a columnar
    ``sample()`` publishes them a few times per vector step, issue 31). An EnvRunner's
    publisher runs no handler in a thread (``offload_sync`` is the Algorithm's).
    """

    __slots__ = ("_ended", "_postprocessed", "_publisher", "_runner", "on_created", "on_started")

    def __init__(self, publisher: Publisher, env_runner: EnvRunner) -> None:
        self._publisher = publisher
        self._runner = env_runner  # for its current module (the learner may set it later)
        self.on_created = publisher.dispatcher(EpisodeCreated)
        """``on_episode_created``'s dispatcher: ``call`` None means ``created()`` does
        nothing (a hot loop may skip the call)."""
        self.on_started = publisher.dispatcher(EpisodeStart)
        """``on_episode_start``'s dispatcher, as ``on_created``."""
        self._ended = publisher.dispatcher(EpisodeEnd)
        self._postprocessed = publisher.dispatcher(PostprocessTrajectory)

    def _call(self, dispatcher: Dispatcher, event: BaseEvent, episode: EpisodeLike) -> Any:
        """Call an episode hook's chain (checked non-empty) on ``event``: return its
        Control or None, or for an async chain the coroutine to await."""
        runner = self._runner
        return dispatcher.call(  # type: ignore[misc]
            event, episode, runner, runner.metrics, runner.env, runner.module, episode.env_index
        )

    async def _run(self, dispatcher: Dispatcher, event: BaseEvent, episode: EpisodeLike) -> None:
        """Run an episode hook's chain (checked non-empty) on ``event``; keep its Control."""
        control = self._call(dispatcher, event, episode)
        if dispatcher.is_async:
            control = await control
        if control is not None:
            self._publisher.add_control(control)

    async def created(self, episode: E) -> E:
        """Publish ``on_episode_created`` for a new, empty ``episode``; return it."""
        if self.on_created.call is not None:
            event = EpisodeCreated(
                source=self._publisher.source,
                seq=self._publisher.next_seq(),
                episode_id=episode.id_,
                env_index=episode.env_index,
                multi_agent=isinstance(episode, MultiAgentEpisode),
            )
            await self._run(self.on_created, event, episode)
        return episode

    async def started(
        self, episode: EpisodeLike, fields: Callable[[], dict[str, Any]] | None = None
    ) -> None:
        """Publish ``on_episode_start`` once the reset is in ``episode``.

        ``fields()`` gives the event's fields of the reset (called only if someone
        listens); by default a single-agent episode's first observation and info.
        """
        if self.on_started.call is not None:
            if fields is None:  # only single-agent episodes come without fields
                single = cast(Episode, episode)  # once per listened-to start, not per step
                data = {"observation": single.observations[0], "info": single.infos[0]}
            else:
                data = fields()
            event = EpisodeStart(
                source=self._publisher.source,
                seq=self._publisher.next_seq(),
                episode_id=episode.id_,
                env_index=episode.env_index,
                **data,
            )
            await self._run(self.on_started, event, episode)

    async def ended(self, episode: EpisodeLike, early: bool) -> None:
        """Publish ``on_episode_end`` (after the final step's ``on_episode_step``), then
        ``on_postprocess_trajectory``.

        ``early``: a handler of the last step ended the episode (``Control.end_episode``).
        """
        publisher, end = self._publisher, self._ended
        if end.call is not None:  # not through _run: one coroutine less, for every episode
            event = EpisodeEnd(
                source=publisher.source,
                seq=publisher.next_seq(),
                episode_id=episode.id_,
                env_index=episode.env_index,
                terminated=episode.is_terminated,
                truncated=episode.is_truncated,
                ended_early=early,
            )
            control = self._call(end, event, episode)
            if end.is_async:
                control = await control
            if control is not None:
                publisher.add_control(control)
        postprocessed = self._postprocessed
        if postprocessed.call is not None:
            runner = self._runner
            trajectory = PostprocessTrajectory(
                source=publisher.source,
                seq=publisher.next_seq(),
                episode_id=episode.id_,
                env_index=episode.env_index,
            )
            result = postprocessed.call(trajectory, episode, runner, runner.metrics)
            if postprocessed.is_async:
                await result

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
