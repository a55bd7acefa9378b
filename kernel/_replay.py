"""Replaying recorded events into callbacks, with the live arguments the installed rules rebuild.

The kernel publishes; what a hook's live arguments are rebuilt from (episodes from their
events) is the rules' business (``_rules``: the hooks' rules live with the runners).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from hookbus.events import BaseEvent

from ._bus import Bus
from ._errors import ConfigError
from ._hooks import event_type_for
from ._read import read_recording, read_recording_header
from ._recorded_types import UnknownEvent, unknown_type_error
from ._rules import MERGES, ReplayRules, ReplaySettings, replay_states

if TYPE_CHECKING:  # metrics (and numpy) load when a replay makes its logger
    from hookbus.metrics import MetricsLogger

__all__ = ("MAX_OPEN_EPISODES", "Kept", "replay", "replay_and_keep")

MAX_OPEN_EPISODES = 10_000
"""How many unfinished episodes replay keeps by default (``max_open_episodes``)."""


async def replay(
    source: str | os.PathLike[str] | Iterable[BaseEvent | UnknownEvent],
    callbacks: object = None,
    *,
    bus: Bus | None = None,
    metrics_logger: MetricsLogger | None = None,
    hooks: Collection[str] | None = None,
    sources: Collection[str] | None = None,
    max_open_episodes: int = MAX_OPEN_EPISODES,
    types: Iterable[type[BaseEvent]] = (),
    merge: str = "framework",
    producer: str | None = None,
    **bus_options: Any,
) -> int:
    """Publish a recorded stream again, in order, and return how many events were published.

    ``source`` is a recording's path or any iterable of events. Handlers run on ``bus``, or
    on a bus built from ``callbacks`` and ``bus_options`` exactly as ``config.callbacks(...)``
    builds one (a class, an instance or a list; ``on_error=``; per-hook callables). They get
    the live arguments replay can rebuild (the installed rules do, docs/recording.md; the
    hooks' rules come with hookbus's runners): episodes (from the recorded EpisodeCreated,
    Start, Step and End events: returns, lengths, observations, actions, rewards, infos and
    temporary data work; a ``MultiAgentEpisode`` for events carrying ``agents``, though
    ``on_episode_created`` still gets a single-agent placeholder, whose ``custom_data``
    carries over), ``metrics_logger`` (the given one, or a fresh one shared by all
    events), ``samples``, ``result`` and ``evaluation_metrics``; the others (env, env_runner,
    algorithm, rl_module, ...) are None. ``hooks`` and ``sources`` keep only those events,
    though episodes are still rebuilt from every recorded step. Events of your own types
    are published as they were recorded, with no live arguments but ``metrics_logger`` if
    the type takes it; ``types`` are those types, when this process has not defined them
    anyway (nothing is imported by the names a recording's header gives).

    An event of a type this process has not defined (an ``UnknownEvent``, in an iterable
    ``source``) stops replay with one RecordingError naming the type and how to pass it,
    after the events before it were published, unless ``sources`` leaves it out. ``hooks``
    cannot: its hook is not recorded, and a tag does not say it.

    At most ``max_open_episodes`` unfinished episodes (the rules' bound on what they keep
    open) are kept (a recording without episode ends never finishes any): past that, the
    least recently active one is dropped, with one HookbusWarning per replay, and a later
    event of it starts a fresh episode.

    ``merge="framework"`` (the default) has the rules follow the reduce cycle of the
    recording's producer (its header's ``producer``, or ``producer=`` for an iterable or
    an older file): for an RLlib bridge's recording, a logger per EnvRunner and the
    Algorithm's, merged and reduced as RLlib 2.60 does at each iteration (the given
    ``metrics_logger`` is then refused); otherwise the one ``metrics_logger``, reduced
    after each ``on_train_result``. ``merge="pooled"`` logs every event into the one
    ``metrics_logger`` and never reduces it: the true mean over every value.
    ``replay_into`` gives each iteration's results (docs/recording.md).
    """
    kept = await replay_and_keep(
        source,
        callbacks,
        bus=bus,
        metrics_logger=metrics_logger,
        hooks=hooks,
        sources=sources,
        max_open_episodes=max_open_episodes,
        types=types,
        merge=merge,
        producer=producer,
        **bus_options,
    )
    return kept.published


class Kept(NamedTuple):
    """What ``replay_and_keep`` returns: ``replay``'s count, and what ``replay_into`` reads."""

    published: int
    """How many events were published (``replay``'s count)."""
    states: list[ReplayRules]
    """The rules' replay states, one per installed rules."""
    logger: MetricsLogger
    """The replay's ``metrics_logger`` (the given one, or the fresh one made)."""


async def replay_and_keep(
    source: str | os.PathLike[str] | Iterable[BaseEvent | UnknownEvent],
    callbacks: object = None,
    *,
    bus: Bus | None = None,
    metrics_logger: MetricsLogger | None = None,
    hooks: Collection[str] | None = None,
    sources: Collection[str] | None = None,
    max_open_episodes: int = MAX_OPEN_EPISODES,
    types: Iterable[type[BaseEvent]] = (),
    merge: str = "framework",
    producer: str | None = None,
    **bus_options: Any,
) -> Kept:
    """Do what ``replay`` does; return the count, the rules' states and the logger."""
    if bus is not None and (callbacks is not None or bus_options):
        raise ConfigError("replay() takes either bus= or callbacks (and their options), not both")
    if type(max_open_episodes) is not int or max_open_episodes < 1:
        raise ConfigError(f"max_open_episodes must be an int >= 1, not {max_open_episodes!r}")
    if merge not in MERGES:
        raise ConfigError(f"merge must be one of {', '.join(map(repr, MERGES))}, not {merge!r}")
    if producer is not None and not isinstance(producer, str):
        raise ConfigError(f"producer must be a str (a recording header's), not {producer!r}")
    logger = metrics_logger
    if logger is None:
        from hookbus.metrics import MetricsLogger

        logger = MetricsLogger()
    types = [event_type_for(cls) for cls in types]  # checked before anything is read
    keep_types = None if hooks is None else {event_type_for(h) for h in hooks}
    keep_sources = None if sources is None else set(sources)
    file = None
    if isinstance(source, str | os.PathLike):
        file = os.fspath(source)
        if producer is None:  # the header says whose recording it is
            producer = read_recording_header(file).producer
        events: Iterable[BaseEvent | UnknownEvent] = read_recording(
            source, types=types, unknown="data"
        )
    else:
        events = source
    settings = ReplaySettings(producer or "", merge, metrics_logger is not None)
    rules = replay_states(logger, max_open_episodes, settings)
    own_bus = bus is None
    bus = bus if bus is not None else Bus(callbacks, **bus_options)
    plain = {"metrics_logger": logger}  # for an event of no rules whose type takes a logger
    count = 0
    try:
        for event in events:
            if isinstance(event, UnknownEvent):
                if keep_sources is not None and event.source not in keep_sources:
                    continue
                raise unknown_type_error(event, file)
            own = rules.get(type(event))
            if own is not None:
                live = own.live_arguments(event)
            else:
                live = plain if "metrics_logger" in event.live_args else {}
            if keep_types is not None and type(event) not in keep_types:
                continue
            if keep_sources is not None and event.source not in keep_sources:
                continue
            await bus.publish(event, **live)
            if own is not None:
                own.published(event)
            count += 1
    finally:
        if own_bus:
            bus.close()
    unique = list({id(state): state for state in rules.values()}.values())
    return Kept(count, unique, logger)
