"""One publisher of an episode's hooks for every sampling loop: ``EpisodePublisher``.

Contract (the EnvRunners' per-step and columnar loops, the multi-agent runner, the SB3
bridge and any other loop over a gymnasium-style env publish through it; nothing else in
``runners/`` calls a chain with positional arguments):

- **What.** ``on_episode_created``, ``on_episode_start``, ``on_episode_step``,
  ``on_episode_end``, ``on_postprocess_trajectory`` and ``on_environment_created``, one
  method each (``created``, ``started``, ``step``, ``ended``, ``postprocessed``,
  ``environment_created``). The loop says *when*; per episode the order a loop keeps is:
  created (before the env's reset), started (once the reset is in the episode), one step
  per env step (the final one included, its ``terminated``/``truncated`` set, as the
  episode's are by then), then ended, then (the EnvRunners) postprocessed. The events'
  fields come from the episode as it is at the call: record the step first, then publish.
- **Nothing for nobody.** Each method reads its hook's dispatcher (``on_created`` ...
  ``on_environment``, kept current by the bus) and, with no subscriber, returns None
  having built nothing and taken no ``seq``. A hot loop may test ``dispatcher.call is None``
  itself to skip even the method call.
- **The live arguments**, passed positionally in ``kernel.LIVE_ARGS`` order: ``episode``
  (the one given), ``env_runner`` (the constructor's, None outside an EnvRunner),
  ``metrics_logger``, ``env`` (the ``env`` attribute: its owner sets a new one, after
  ``make_env()`` say), ``rl_module`` (read at every publish: ``module_from``'s ``module``
  attribute, an EnvRunner whose module the learner sets later, or by default this
  publisher's own ``module`` attribute, which its owner sets) and ``env_index``
  (``episode.env_index``). ``on_environment_created`` gets ``env_context`` as given.
- **seq** is the ``kernel.Publisher``'s: each event built takes its source's next number,
  so the loop's other events (``on_sample_end``) stay gap-free with these. Renaming the
  publisher's ``source`` takes effect at the next event.
- **Control** is the caller's: each method returns what the chain returns, a Control
  (or None) for an all-sync chain, or for an async chain (``dispatcher.is_async``) the
  awaitable that gives it. The methods do no I/O and never await, so an async runner
  awaits the result and a sync loop (a bridge's) hands the awaitable to its event loop
  thread (``SyncBus.resolve``). Only ``on_episode_step`` and ``on_episode_end`` take a
  Control; what the loop does with it (end the episode, stop training) is the loop's.
- **For async runners**, ``acreated``, ``astarted``, ``aended`` and
  ``aenvironment_created`` await the chain when it is async and keep its Control in the
  ``kernel.Publisher`` (``take_control()``); ``aended`` publishes ``on_episode_end`` and
  then ``on_postprocess_trajectory``, as an EnvRunner does. The step hook has no async
  helper: awaiting one per step costs about 340 ns (docs/design.md), so a loop calls
  ``step()`` and awaits only an async chain's result.
- **Threads.** The chains are called as a held dispatcher's are, without
  ``Publisher.publish``'s thread check: publish from the thread the bus's publishes come
  from (the runner's event loop; a sync bridge's caller, its async chains on its loop).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from hookbus.events import (
    AgentData,
    EnvironmentCreated,
    EpisodeCreated,
    EpisodeEnd,
    EpisodeStart,
    EpisodeStep,
    PostprocessTrajectory,
)
from hookbus.kernel import Dispatcher, Publisher

from ._episode import Episode
from ._like import EpisodeLike
from ._multi_agent_episode import MultiAgentEpisode

if TYPE_CHECKING:
    from hookbus.metrics import MetricsLogger

__all__ = ("EpisodePublisher", "ModuleHolder")

E = TypeVar("E", bound=EpisodeLike)


class ModuleHolder(Protocol):
    """What holds the module a loop acts with now: its ``module`` attribute."""

    module: Any


class EpisodePublisher:
    """Publish an episode's hooks and the env's creation for one loop (module docstring).

    ``publisher`` numbers the events under its source; ``env`` and ``metrics_logger`` are
    the hooks' live arguments of those names, ``env_runner`` too (None outside an
    EnvRunner). ``module_from`` holds the current module in its ``module`` attribute, read
    at every publish; without it, this publisher's own ``module`` (None until set).
    """

    __slots__ = (
        "_holder",
        "env",
        "env_runner",
        "metrics_logger",
        "module",
        "on_created",
        "on_ended",
        "on_environment",
        "on_postprocessed",
        "on_started",
        "on_step",
        "publisher",
    )

    def __init__(
        self,
        publisher: Publisher,
        *,
        env: Any,
        metrics_logger: MetricsLogger,
        env_runner: Any = None,
        module_from: ModuleHolder | None = None,
    ) -> None:
        self.publisher = publisher
        self.env = env
        """The ``env`` live argument (set a new one when the loop's env changes)."""
        self.metrics_logger = metrics_logger
        self.env_runner = env_runner
        self.module: Any = None
        """The module, when ``module_from`` was not given: set by the publisher's owner."""
        self._holder: ModuleHolder = self if module_from is None else module_from
        self.on_created: Dispatcher = publisher.dispatcher(EpisodeCreated)
        """``on_episode_created``'s dispatcher: ``call`` None means nobody listens."""
        self.on_started: Dispatcher = publisher.dispatcher(EpisodeStart)
        self.on_step: Dispatcher = publisher.dispatcher(EpisodeStep)
        self.on_ended: Dispatcher = publisher.dispatcher(EpisodeEnd)
        self.on_postprocessed: Dispatcher = publisher.dispatcher(PostprocessTrajectory)
        self.on_environment: Dispatcher = publisher.dispatcher(EnvironmentCreated)

    # --- the core: build the event if anyone listens, call the chain, return its result ---

    def created(self, episode: EpisodeLike) -> Any:
        """Publish ``on_episode_created`` for a new, empty ``episode`` (before its reset)."""
        call = self.on_created.call
        if call is None:
            return None
        publisher, i = self.publisher, episode.env_index
        event = EpisodeCreated(
            source=publisher.source,
            seq=publisher.next_seq(),
            episode_id=episode.id_,
            env_index=i,
            multi_agent=isinstance(episode, MultiAgentEpisode),
        )
        return call(
            event, episode, self.env_runner, self.metrics_logger, self.env, self._holder.module, i
        )

    def started(
        self, episode: EpisodeLike, agents: Callable[[], list[AgentData]] | None = None
    ) -> Any:
        """Publish ``on_episode_start`` once the reset is in ``episode``.

        A single-agent episode's event holds its first observation and info; a multi-agent
        one's holds ``agents()`` (called only if someone listens) instead.
        """
        call = self.on_started.call
        if call is None:
            return None
        publisher, i = self.publisher, episode.env_index
        if agents is None:  # a single-agent episode (checked once per start, not per step)
            single = cast(Episode, episode)
            event = EpisodeStart(
                source=publisher.source,
                seq=publisher.next_seq(),
                episode_id=episode.id_,
                env_index=i,
                observation=single.observations[0],
                info=single.infos[0],
            )
        else:
            event = EpisodeStart(
                source=publisher.source,
                seq=publisher.next_seq(),
                episode_id=episode.id_,
                env_index=i,
                agents=agents(),
            )
        return call(
            event, episode, self.env_runner, self.metrics_logger, self.env, self._holder.module, i
        )

    def step(
        self,
        episode: EpisodeLike,
        action: object,
        reward: float,
        observation: object,
        info: dict[str, Any],
        agents: list[AgentData] | None = None,
    ) -> Any:
        """Publish ``on_episode_step`` for the step just recorded into ``episode``.

        ``action``, ``reward``, ``observation`` and ``info`` go into the event as they are
        (a multi-agent step leaves them at their defaults and gives ``agents``); its
        ``terminated`` and ``truncated`` are the episode's. The hot path: a call, no dict
        built, no coroutine of its own.
        """
        call = self.on_step.call
        if call is None:
            return None
        publisher, i = self.publisher, episode.env_index
        event = EpisodeStep(
            source=publisher.source,
            seq=publisher.next_seq(),
            episode_id=episode.id_,
            env_index=i,
            action=action,
            reward=reward,
            observation=observation,
            info=info,
            agents=agents,
            terminated=episode.is_terminated,
            truncated=episode.is_truncated,
        )
        return call(
            event, episode, self.env_runner, self.metrics_logger, self.env, self._holder.module, i
        )

    def ended(self, episode: EpisodeLike, early: bool = False) -> Any:
        """Publish ``on_episode_end`` (after the final step's ``on_episode_step``).

        ``early``: a handler of the last step ended the episode (``Control.end_episode``).
        """
        call = self.on_ended.call
        if call is None:
            return None
        publisher, i = self.publisher, episode.env_index
        event = EpisodeEnd(
            source=publisher.source,
            seq=publisher.next_seq(),
            episode_id=episode.id_,
            env_index=i,
            terminated=episode.is_terminated,
            truncated=episode.is_truncated,
            ended_early=early,
        )
        return call(
            event, episode, self.env_runner, self.metrics_logger, self.env, self._holder.module, i
        )

    def postprocessed(self, episode: EpisodeLike) -> Any:
        """Publish ``on_postprocess_trajectory`` for an ended ``episode``."""
        call = self.on_postprocessed.call
        if call is None:
            return None
        publisher = self.publisher
        event = PostprocessTrajectory(
            source=publisher.source,
            seq=publisher.next_seq(),
            episode_id=episode.id_,
            env_index=episode.env_index,
        )
        return call(event, episode, self.env_runner, self.metrics_logger)

    def environment_created(
        self,
        env_context: Mapping[str, Any] | None = None,
        *,
        env_id: str = "",
        num_envs: int = 1,
        worker_index: int = 0,
        in_evaluation: bool = False,
    ) -> Any:
        """Publish ``on_environment_created`` for ``env`` (made with ``env_context``, whose
        items are the event's ``env_config``)."""
        call = self.on_environment.call
        if call is None:
            return None
        publisher = self.publisher
        event = EnvironmentCreated(
            source=publisher.source,
            seq=publisher.next_seq(),
            env_id=env_id,
            num_envs=num_envs,
            worker_index=worker_index,
            in_evaluation=in_evaluation,
            env_config={} if env_context is None else dict(env_context),
        )
        return call(event, self.env_runner, self.metrics_logger, self.env, env_context)

    # --- for async runners: await an async chain, keep the Control ---------------------------

    async def acreated(self, episode: E) -> E:
        """Publish ``on_episode_created`` (``created``) and return ``episode``."""
        on_created = self.on_created
        if on_created.call is not None:
            result = self.created(episode)
            if on_created.is_async:
                result = await result
            if result is not None:
                self.publisher.add_control(result)
        return episode

    async def astarted(
        self, episode: EpisodeLike, agents: Callable[[], list[AgentData]] | None = None
    ) -> None:
        """Publish ``on_episode_start`` (``started``)."""
        on_started = self.on_started
        if on_started.call is not None:
            result = self.started(episode, agents)
            if on_started.is_async:
                result = await result
            if result is not None:
                self.publisher.add_control(result)

    async def aended(self, episode: EpisodeLike, early: bool = False) -> None:
        """Publish ``on_episode_end`` (``ended``), then ``on_postprocess_trajectory``."""
        on_ended = self.on_ended
        if on_ended.call is not None:
            result = self.ended(episode, early)
            if on_ended.is_async:
                result = await result
            if result is not None:
                self.publisher.add_control(result)
        on_postprocessed = self.on_postprocessed
        if on_postprocessed.call is not None:
            result = self.postprocessed(episode)
            if on_postprocessed.is_async:
                await result

    async def aenvironment_created(
        self,
        env_context: Mapping[str, Any] | None = None,
        *,
        env_id: str = "",
        num_envs: int = 1,
        worker_index: int = 0,
        in_evaluation: bool = False,
    ) -> None:
        """Publish ``on_environment_created`` (``environment_created``)."""
        on_environment = self.on_environment
        if on_environment.call is not None:
            result = self.environment_created(
                env_context,
                env_id=env_id,
                num_envs=num_envs,
                worker_index=worker_index,
                in_evaluation=in_evaluation,
            )
            if on_environment.is_async:
                result = await result
            if result is not None:
                self.publisher.add_control(result)

    def __repr__(self) -> str:
        return f"<EpisodePublisher {self.publisher.source}>"
