"""EpisodePublisher: one episode's hooks in order, built only when listened to, on a real Bus."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
import sniffio

from hookbus.events import AgentData, EpisodeStart, EpisodeStep
from hookbus.kernel import LIVE_ARGS, Bus, Control, Publisher
from hookbus.metrics import MetricsLogger
from hookbus.runners.episodes import Episode, EpisodePublisher, MultiAgentEpisode

EPISODE_HOOKS = (
    "on_episode_created",
    "on_episode_start",
    "on_episode_step",
    "on_episode_end",
    "on_postprocess_trajectory",
)


class Env:
    """The ``env`` live argument: the publisher hands it on, reading nothing of it."""


class Holder:
    """What holds the module a loop acts with (an EnvRunner's ``module``)."""

    def __init__(self, module: object) -> None:
        self.module = module


def make(bus: Bus, **options: Any) -> EpisodePublisher:
    options.setdefault("env", Env())
    options.setdefault("metrics_logger", MetricsLogger())
    return EpisodePublisher(Publisher(bus, "loop:0"), **options)


def recorder(hook: str, calls: list[tuple[str, dict[str, Any]]], is_async: bool) -> Any:
    """Return a handler of ``hook`` recording each call's keyword arguments."""

    def record(**kwargs: Any) -> None:
        calls.append((hook, kwargs))

    async def record_async(**kwargs: Any) -> None:
        await anyio.lowlevel.checkpoint()
        calls.append((hook, kwargs))

    return record_async if is_async else record


def trace(bus: Bus, calls: list[tuple[str, dict[str, Any]]], *, is_async: bool = False) -> None:
    """Subscribe to every episode hook and the env's creation, recording each call."""
    for hook in (*EPISODE_HOOKS, "on_environment_created"):
        bus.subscribe(hook, recorder(hook, calls, is_async))


async def settle(dispatcher: Any, result: Any) -> Any:
    """What an async runner does with a core method's result."""
    return await result if dispatcher.is_async else result


async def play(publisher: EpisodePublisher, episode: Episode, rewards: list[float]) -> None:
    """Play ``episode`` as a sampling loop does: created, reset, started, steps, ended."""
    await publisher.acreated(episode)
    episode.add_reset(0, {"reset": True})
    await publisher.astarted(episode)
    for t, reward in enumerate(rewards, start=1):
        last = t == len(rewards)
        episode.add_step(t, t % 2, reward, last, False, {"t": t})
        await settle(publisher.on_step, publisher.step(episode, t % 2, reward, t, {"t": t}))
    await publisher.aended(episode)


@pytest.mark.anyio
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_an_episodes_hooks_come_in_order_with_the_final_step_before_the_end(
    is_async: bool,
) -> None:
    calls: list[tuple[str, dict[str, Any]]] = []
    bus = Bus()
    trace(bus, calls, is_async=is_async)
    publisher = make(bus)
    episode = Episode(env_index=2)
    await play(publisher, episode, [1.0, 0.5, 2.0])
    hooks = [hook for hook, _ in calls]
    assert hooks == [
        "on_episode_created",
        "on_episode_start",
        "on_episode_step",
        "on_episode_step",
        "on_episode_step",
        "on_episode_end",
        "on_postprocess_trajectory",
    ]
    events = [kwargs["event"] for _, kwargs in calls]
    assert [event.seq for event in events] == list(range(7))
    assert {event.source for event in events} == {"loop:0"}
    assert {event.episode_id for event in events} == {episode.id_}
    _, start, *steps, end, _ = events
    assert (start.observation, start.info) == (0, {"reset": True})
    assert [(s.reward, s.observation, s.info) for s in steps] == [
        (1.0, 1, {"t": 1}),
        (0.5, 2, {"t": 2}),
        (2.0, 3, {"t": 3}),
    ]
    assert [s.terminated for s in steps] == [False, False, True]  # the final one's, as set
    assert (end.terminated, end.truncated, end.ended_early) == (True, False, False)
    assert publisher.publisher.seq == 7


@pytest.mark.anyio
async def test_no_event_is_built_for_a_hook_nobody_listens_to() -> None:
    ends: list[Any] = []
    bus = Bus(on_episode_end=[lambda *, event, **kwargs: ends.append(event)])
    publisher = make(bus)
    episode = Episode()
    assert publisher.created(episode) is None
    episode.add_reset(0, {})
    assert publisher.started(episode) is None
    episode.add_step(1, 0, 1.0, True, False, {})
    assert publisher.step(episode, 0, 1.0, 1, {}) is None
    assert publisher.postprocessed(episode) is None
    assert publisher.environment_created({"a": 1}) is None
    publisher.ended(episode)
    # Only the end was built: it took the source's first seq, and nothing else took one.
    assert [event.seq for event in ends] == [0]
    assert publisher.publisher.seq == 1


def test_a_multi_agent_start_describes_its_agents_only_when_listened_to() -> None:
    described: list[int] = []

    def agents() -> list[AgentData]:
        described.append(1)
        return [AgentData(agent_id="a", observation=[1.0])]

    bus = Bus()
    publisher = make(bus)
    episode = MultiAgentEpisode(env_index=1)
    assert publisher.started(episode, agents) is None
    assert described == []
    starts: list[Any] = []
    bus.subscribe("on_episode_start", lambda *, event, **kwargs: starts.append(event))
    bus.subscribe("on_episode_created", lambda *, event, **kwargs: starts.append(event))
    publisher.created(episode)
    publisher.started(episode, agents)
    created, start = starts
    assert isinstance(start, EpisodeStart)
    assert created.multi_agent is True
    assert described == [1]
    assert start.agents == [AgentData(agent_id="a", observation=[1.0])]
    assert (start.observation, start.env_index) == (None, 1)


@pytest.mark.anyio
async def test_handlers_get_the_live_arguments_that_kernel_live_args_names() -> None:
    calls: list[tuple[str, dict[str, Any]]] = []
    bus = Bus()
    trace(bus, calls)
    env, logger, runner, module = Env(), MetricsLogger(), object(), object()
    publisher = make(bus, env=env, metrics_logger=logger, env_runner=runner)
    publisher.module = module
    episode = Episode(env_index=5)
    await play(publisher, episode, [1.0])
    context = {"worker": 1}
    await publisher.aenvironment_created(context, env_id="CartPole-v1", num_envs=4)
    expected = {
        "episode": episode,
        "env_runner": runner,
        "metrics_logger": logger,
        "env": env,
        "rl_module": module,
        "env_index": 5,
        "env_context": context,
    }
    assert len(calls) == 6
    for hook, kwargs in calls:
        assert set(kwargs) == {"event", *LIVE_ARGS[hook]}, hook
        for name in LIVE_ARGS[hook]:
            assert kwargs[name] is expected[name] or kwargs[name] == expected[name], (hook, name)
    created = calls[-1][1]["event"]
    assert (created.env_id, created.num_envs, created.env_config) == ("CartPole-v1", 4, context)
    assert created.env_config is not context  # the event's own copy


def test_the_module_and_env_are_read_at_every_publish() -> None:
    seen: list[tuple[object, object]] = []
    bus = Bus(on_episode_step=[lambda *, rl_module, env, **kw: seen.append((rl_module, env))])
    holder = Holder("first")
    publisher = make(bus, module_from=holder)
    episode = Episode()
    episode.add_reset(0, {})
    publisher.step(episode, 0, 0.0, 0, {})
    holder.module = "second"  # the learner sets the runner's module
    new_env = Env()
    publisher.env = new_env  # the loop made its env anew
    publisher.step(episode, 0, 0.0, 0, {})
    assert seen[0][0] == "first"
    assert seen[1] == ("second", new_env)
    own = make(bus)  # without module_from: the publisher's own attribute
    own.step(episode, 0, 0.0, 0, {})
    own.module = "own"
    own.step(episode, 0, 0.0, 0, {})
    assert [module for module, _ in seen[2:]] == [None, "own"]


def test_each_episode_publishes_its_own_env_index() -> None:
    steps: list[tuple[int, int]] = []
    bus = Bus(on_episode_step=[lambda *, event, env_index, **kw: steps.append((event, env_index))])
    publisher = make(bus)
    for i in (0, 7, 3):
        episode = Episode(env_index=i)
        episode.add_reset(0, {})
        publisher.step(episode, 0, 0.0, 0, {})
    assert [(event.env_index, i) for event, i in steps] == [(0, 0), (7, 7), (3, 3)]


def test_a_sync_step_handlers_control_is_returned_to_the_loop() -> None:
    def end(*, episode: Any, **kwargs: Any) -> Control | None:
        return Control(end_episode=True) if len(episode) == 2 else None

    bus = Bus(on_episode_step=[end])
    publisher = make(bus)
    episode = Episode()
    episode.add_reset(0, {})
    results = []
    for t in (1, 2):
        episode.add_step(t, 0, 0.0, False, False, {})
        results.append(publisher.step(episode, 0, 0.0, t, {}))
    assert results[0] is None
    assert isinstance(results[1], Control)
    assert results[1].end_episode
    assert publisher.publisher.take_control() is None  # the loop's to keep, not the core's


@pytest.mark.anyio
async def test_an_async_chain_gives_an_awaitable_and_the_helpers_keep_its_control() -> None:
    async def stop(**kwargs: Any) -> Control:
        await anyio.lowlevel.checkpoint()
        return Control(stop_training=True, reason="enough")

    bus = Bus(on_episode_step=[stop], on_episode_end=[stop])
    publisher = make(bus)
    episode = Episode()
    episode.add_reset(0, {})
    episode.add_step(1, 0, 0.0, True, False, {})
    assert publisher.on_step.is_async
    pending = publisher.step(episode, 0, 0.0, 1, {})
    control = await pending
    assert control.stop_training
    assert publisher.publisher.take_control() is None
    await publisher.aended(episode)  # the async helper awaits and keeps the Control
    kept = publisher.publisher.take_control()
    assert kept is not None
    assert kept.stop_training
    assert kept.reason == "enough"


def test_sync_chains_publish_without_an_event_loop() -> None:
    hooks: list[str] = []
    bus = Bus()
    for hook in EPISODE_HOOKS:
        bus.subscribe(hook, lambda *, event, _hook=hook, **kw: hooks.append(_hook))
    publisher = make(bus)
    episode = Episode()
    publisher.created(episode)
    episode.add_reset(0, {})
    publisher.started(episode)
    episode.add_step(1, 0, 1.0, False, True, {})
    publisher.step(episode, 0, 1.0, 1, {})
    publisher.ended(episode)
    publisher.postprocessed(episode)
    assert hooks == list(EPISODE_HOOKS)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_sync_loop_runs_an_async_chain_on_an_event_loop_of_its_choice(backend: str) -> None:
    """The core never awaits: a sync caller hands the awaitable to a loop (a bridge's)."""
    seen: list[str] = []

    async def step(*, event: EpisodeStep, **kwargs: Any) -> Control:
        await anyio.lowlevel.checkpoint()
        seen.append(sniffio.current_async_library())
        return Control(stop_training=True)

    publisher = make(Bus(on_episode_step=[step]))
    episode = Episode()
    episode.add_reset(0, {})
    episode.add_step(1, 0, 1.0, False, False, {})
    pending = publisher.step(episode, 0, 1.0, 1, {})
    assert seen == []  # nothing ran yet: the chain waits for a loop

    async def run() -> Control:
        control: Control = await pending
        return control

    control = anyio.run(run, backend=backend)
    assert control.stop_training
    assert seen == [backend]


def test_a_raising_handler_propagates_out_of_the_publish() -> None:
    def broken(**kwargs: Any) -> None:
        raise RuntimeError("broken step handler")

    bus = Bus(on_episode_step=[broken])
    publisher = make(bus)
    episode = Episode()
    episode.add_reset(0, {})
    with pytest.raises(RuntimeError, match="broken step handler"):
        publisher.step(episode, 0, 0.0, 0, {})
    assert publisher.publisher.seq == 1  # the event was built and numbered before the chain


def test_a_renamed_source_takes_effect_at_the_next_event() -> None:
    events: list[Any] = []
    bus = Bus(on_episode_created=[lambda *, event, **kw: events.append(event)])
    publisher = make(bus)
    publisher.created(Episode())
    publisher.publisher.source = "env_runner:3"
    publisher.created(Episode())
    assert [(event.source, event.seq) for event in events] == [("loop:0", 0), ("env_runner:3", 1)]


def test_its_repr_names_the_source() -> None:
    assert repr(make(Bus())) == "<EpisodePublisher loop:0>"
