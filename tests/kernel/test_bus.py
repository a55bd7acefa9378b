"""The bus: chain order, sync and async handlers, subscribing, live arguments, closing."""

from __future__ import annotations

import functools
import warnings
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from hookbus.events import EpisodeEnd, EpisodeStep, SampleEnd, TrainResult
from hookbus.kernel import Bus, BusClosedError, Callback, ConfigError, HookbusWarning

pytestmark = pytest.mark.anyio


def recorder(log: list[str], name: str) -> Any:
    def handler(**kwargs: Any) -> None:
        log.append(name)

    return handler


def make_class(log: list[str], name: str) -> type[Callback]:
    class Named(Callback):
        def on_episode_end(self, **kwargs: Any) -> None:
            log.append(name)

    Named.__qualname__ = name
    return Named


async def test_chain_order_is_classes_then_callables_then_subscribed() -> None:
    log: list[str] = []
    bus = Bus(
        callbacks_class=[make_class(log, "A"), make_class(log, "B")],
        on_episode_end=[recorder(log, "f1"), recorder(log, "f2")],
    )
    bus.subscribe(EpisodeEnd, recorder(log, "s1"))
    bus.subscribe("on_episode_end", recorder(log, "s2"))
    await bus.publish(EpisodeEnd())
    assert log == ["A", "B", "f1", "f2", "s1", "s2"]


async def test_mixed_sync_and_async_handlers_run_strictly_in_order() -> None:
    log: list[str] = []

    class Slow(Callback):
        async def on_episode_step(self, **kwargs: Any) -> None:
            log.append("slow start")
            await anyio.sleep(0.01)
            log.append("slow end")

    async def also_async(**kwargs: Any) -> None:
        await anyio.lowlevel.checkpoint()
        log.append("async fn")

    bus = Bus(Slow, on_episode_step=[recorder(log, "sync fn"), also_async])
    bus.subscribe(EpisodeStep, recorder(log, "subscribed"))
    await bus.publish(EpisodeStep())
    assert log == ["slow start", "slow end", "sync fn", "async fn", "subscribed"]


async def test_async_callable_objects_and_partials_are_awaited() -> None:
    log: list[Any] = []

    class AsyncCallable:
        async def __call__(self, **kwargs: Any) -> None:
            await anyio.lowlevel.checkpoint()
            log.append("object")

    async def tagged(tag: str, **kwargs: Any) -> None:
        await anyio.lowlevel.checkpoint()
        log.append(tag)

    bus = Bus(on_sample_end=[AsyncCallable(), functools.partial(tagged, "partial")])
    await bus.publish(SampleEnd())
    assert log == ["object", "partial"]


async def test_handlers_receive_event_and_every_live_argument() -> None:
    seen: list[dict[str, Any]] = []

    def handler(**kwargs: Any) -> None:
        seen.append(kwargs)

    bus = Bus(on_episode_step=handler)
    event = EpisodeStep(source="env_runner:0", seq=7)
    await bus.publish(event, episode="ep", env_index=2)
    assert seen == [
        {
            "event": event,
            "episode": "ep",
            "env_runner": None,  # left out: None, as replay passes for what it cannot rebuild
            "metrics_logger": None,
            "env": None,
            "rl_module": None,
            "env_index": 2,
        }
    ]


async def test_unknown_live_argument_is_a_type_error() -> None:
    bus = Bus(on_episode_step=recorder([], "f"))
    with pytest.raises(TypeError, match=r"dispatch_on_episode_step.*'not_a_live_arg'"):
        await bus.publish(EpisodeStep(), not_a_live_arg=1)


async def test_class_without_override_is_not_in_the_chain() -> None:
    class OnlyEnd(Callback):
        def on_episode_end(self, **kwargs: Any) -> None:
            pass

    bus = Bus(OnlyEnd)
    assert bus.has_subscribers(EpisodeEnd)
    assert not bus.has_subscribers(EpisodeStep)
    assert bus.statistics().subscribers == {"on_episode_end": 1}


async def test_instances_are_used_as_given_and_classes_are_instantiated() -> None:
    class Count(Callback):
        def __init__(self) -> None:
            self.n = 0

        def on_train_result(self, **kwargs: Any) -> None:
            self.n += 1

    given = Count()
    bus = Bus(callbacks_class=[given, Count])
    await bus.publish(TrainResult())
    assert bus.callbacks[0] is given
    assert isinstance(bus.callbacks[1], Count)
    assert [cb.n for cb in bus.callbacks] == [1, 1]  # type: ignore[attr-defined]


async def test_duck_typed_class_handlers_work_without_subclassing() -> None:
    log: list[str] = []

    class Duck:
        def on_sample_end(self, **kwargs: Any) -> None:
            log.append("duck")

    await Bus(Duck).publish(SampleEnd())
    assert log == ["duck"]


async def test_subscribe_unsubscribe_and_has_subscribers() -> None:
    log: list[str] = []
    fn = recorder(log, "f")
    bus = Bus()
    assert not bus.has_subscribers(EpisodeEnd)
    bus.subscribe(EpisodeEnd, fn)
    bus.subscribe(EpisodeEnd, fn)
    assert bus.has_subscribers(EpisodeEnd)
    await bus.publish(EpisodeEnd())
    bus.unsubscribe(EpisodeEnd, fn)  # removes one of the two
    await bus.publish(EpisodeEnd())
    bus.unsubscribe(EpisodeEnd, fn)
    assert not bus.has_subscribers(EpisodeEnd)
    await bus.publish(EpisodeEnd())
    assert log == ["f", "f", "f"]
    with pytest.raises(ConfigError, match="is not subscribed to 'on_episode_end'"):
        bus.unsubscribe(EpisodeEnd, fn)


async def test_a_handler_subscribing_during_dispatch_takes_effect_next_publish() -> None:
    log: list[str] = []
    bus = Bus()

    def first(**kwargs: Any) -> None:
        log.append("first")
        bus.subscribe(EpisodeEnd, recorder(log, "late"))

    bus.subscribe(EpisodeEnd, first)
    await bus.publish(EpisodeEnd())
    assert log == ["first"]
    await bus.publish(EpisodeEnd())
    assert log == ["first", "first", "late"]


async def test_dispatcher_positional_path_matches_publish() -> None:
    seen: list[tuple[Any, ...]] = []

    def handler(*, event: Any, episode: Any, env_index: Any, **kwargs: Any) -> None:
        seen.append((event.seq, episode, env_index, kwargs["rl_module"]))

    bus = Bus()
    step = bus.dispatcher(EpisodeStep)
    assert step.call is None
    bus.subscribe(EpisodeStep, handler)
    assert step.call is not None  # the same object, kept current
    assert not step.is_async
    assert step.live_args == (
        "episode",
        "env_runner",
        "metrics_logger",
        "env",
        "rl_module",
        "env_index",
    )
    step.call(EpisodeStep(seq=1), "ep", "runner", "logger", "env", "module", 3)
    await bus.publish(EpisodeStep(seq=2), episode="ep", env_index=4, rl_module="m")
    assert seen == [(1, "ep", 3, "module"), (2, "ep", 4, "m")]


async def test_handler_return_values_are_ignored() -> None:
    bus = Bus(on_episode_end=lambda **kw: "ignored")
    assert await bus.publish(EpisodeEnd()) is None


def test_unknown_hook_name_suggests_the_closest() -> None:
    with pytest.raises(
        ConfigError,
        match=r"unknown hook 'on_episode_stp' \(did you mean "
        r"'on_episode_step'\?\); known hooks: on_algorithm_init",
    ):
        Bus(on_episode_stp=lambda **kw: None)


def test_bad_handlers_and_options_are_refused_with_the_bad_value() -> None:
    with pytest.raises(ConfigError, match="handler for 'on_episode_end' must be callable, got 3"):
        Bus(on_episode_end=[3])
    with pytest.raises(ConfigError, match="unknown on_error policy 'ignore'; allowed: 'raise', "):
        Bus(on_error="ignore")
    with pytest.raises(ConfigError, match="unknown hook 'on_nothing'"):
        Bus().subscribe("on_nothing", lambda **kw: None)
    with pytest.raises(ConfigError, match="must be callable, got 'text'"):
        Bus().subscribe(EpisodeEnd, "text")  # type: ignore[arg-type]


def test_subscribe_to_a_non_event_type_names_it() -> None:
    with pytest.raises(ConfigError, match=r"<class 'int'> is not a hookbus event type"):
        Bus().subscribe(int, lambda **kw: None)  # type: ignore[arg-type]


def test_class_needing_arguments_asks_for_an_instance() -> None:
    class NeedsPath(Callback):
        def __init__(self, path: str) -> None:
            self.path = path

    with pytest.raises(
        ConfigError,
        match=r"cannot instantiate callback class .*NeedsPath.*pass an instance instead",
    ):
        Bus(NeedsPath)


def test_plain_function_as_callbacks_class_is_refused() -> None:
    with pytest.raises(ConfigError, match="pass plain callables per hook instead"):
        Bus(lambda **kw: None)


def test_misspelt_hook_method_warns() -> None:
    class Typo(Callback):
        def on_episode_ends(self, **kwargs: Any) -> None:
            pass

    with pytest.warns(
        HookbusWarning,
        match=r"Typo.on_episode_ends is not a hook.*"
        r"did you mean 'on_episode_end'\?",
    ):
        Bus(Typo)


def test_a_misspelt_hooks_warning_points_at_the_method_not_the_call() -> None:
    class Typo(Callback):
        def on_episode_ends(self, **kwargs: Any) -> None:
            pass

    def add(callback: object) -> Bus:  # some other code adds the class, as the CLI does
        return Bus(callback)

    with pytest.warns(HookbusWarning, match=r"Typo\.on_episode_ends is not a hook") as record:
        add(Typo)
    (warning,) = record.list
    assert warning.filename == __file__
    assert warning.lineno == Typo.on_episode_ends.__code__.co_firstlineno
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("default")  # Python's default: once per location
        add(Typo)
        add(Typo)  # the same class again (config.callbacks(), then build()): no repeat
    assert len(shown) == 1


async def test_publishing_something_that_is_not_an_event_is_refused() -> None:
    with pytest.raises(ConfigError, match="cannot publish 42: not a hookbus event"):
        await Bus().publish(42)  # type: ignore[arg-type]


async def test_close_closes_callbacks_once_and_refuses_later_use() -> None:
    closed: list[str] = []

    class Resource(Callback):
        def on_episode_end(self, **kwargs: Any) -> None:
            pass

        def close(self) -> None:
            closed.append("closed")

    async with Bus(Resource) as bus:
        await bus.publish(EpisodeEnd())
    assert closed == ["closed"]
    assert bus.closed
    bus.close()  # idempotent
    assert closed == ["closed"]
    with pytest.raises(BusClosedError, match="cannot publish EpisodeEnd: the bus is closed"):
        await bus.publish(EpisodeEnd())
    with pytest.raises(BusClosedError, match="cannot subscribe to a closed bus"):
        bus.subscribe(EpisodeEnd, lambda **kw: None)


def test_close_closes_every_callback_even_if_one_fails() -> None:
    closed: list[str] = []

    class Bad(Callback):
        def close(self) -> None:
            raise OSError("disk gone")

    class Good(Callback):
        def close(self) -> None:
            closed.append("good")

    bus = Bus([Bad, Good])
    with pytest.raises(OSError, match="disk gone") as info:
        bus.close()
    assert closed == ["good"]
    assert "hookbus: raised by " in info.value.__notes__[0]


def test_sync_context_manager_closes() -> None:
    with Bus() as bus:
        assert not bus.closed
    assert bus.closed
    assert "closed" in repr(bus)


async def test_forward_runs_only_the_observers_in_chain_order() -> None:
    log: list[str] = []

    class Worker(Callback):  # runs where events happen: not an observer
        def on_episode_end(self, **kwargs: Any) -> None:
            log.append("worker class")

    class Watcher(Callback):
        observer = True

        def on_episode_end(self, **kwargs: Any) -> None:
            log.append("observer class")

    bus = Bus([Worker, Watcher], on_episode_end=recorder(log, "callable"))
    assert bus.observed_hooks() == {"on_episode_end"}
    bus.subscribe(EpisodeStep, recorder(log, "subscribed"))
    assert bus.observed_hooks() == {"on_episode_end", "on_episode_step"}
    async with bus.stream(TrainResult, buffer=1) as stream:
        await bus.forward(EpisodeEnd())
        await bus.forward(EpisodeStep())
        await bus.forward(TrainResult(seq=4))
        assert (await stream.receive()).seq == 4
    assert log == ["observer class", "subscribed"]
    await bus.publish(EpisodeEnd())
    assert log[2:] == ["worker class", "observer class", "callable"]


def test_named_services_are_provided_found_and_cleared_with_the_bus() -> None:
    bus = Bus()
    tracer = object()
    bus.services.provide("tracer", tracer)
    assert bus.services.get("tracer") is tracer
    assert "tracer" in bus.services
    assert list(bus.services) == ["tracer"]
    assert bus.services.get("metrics_sink", None) is None
    with pytest.raises(
        ConfigError,
        match=r"no service named 'tracr' \(did you mean 'tracer'\?\); "
        r"provided: 'tracer'",
    ):
        bus.services.get("tracr")
    with pytest.raises(ConfigError, match=r"already provided .* pass replace=True"):
        bus.services.provide("tracer", object())
    replacement = object()
    bus.services.provide("tracer", replacement, replace=True)
    assert bus.services.remove("tracer") is replacement
    with pytest.raises(ConfigError, match="a service name must be a non-empty str, got ''"):
        bus.services.provide("", tracer)
    bus.services.provide("again", tracer)
    bus.close()
    assert len(bus.services) == 0
