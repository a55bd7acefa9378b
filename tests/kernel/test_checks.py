"""Bad subscribers are refused when they are added, never at their first event."""

from __future__ import annotations

import functools
import types
from typing import Any

import pytest

from hookbus.events import EpisodeEnd, TrainResult
from hookbus.kernel import (
    OPTIONAL_LIVE_ARGS,
    Bus,
    Callback,
    ConfigError,
    Recorder,
    check_callbacks,
)

pytestmark = pytest.mark.anyio

EPISODE_ARGS = "event, episode, env_runner, metrics_logger, env, rl_module, env_index"


def wants_episode_only(episode: Any) -> None:
    """No **kwargs: called with ``episode`` alone, as RLlib calls a plain function."""


def positional_only(episode: Any, /, **kwargs: Any) -> None:
    """Handlers are called with keywords only: ``episode`` can never be filled."""


def wants_more(*, event: Any, foo: Any, **kwargs: Any) -> None:
    """Requires an argument no hook passes."""


class BadMethod(Callback):
    def on_episode_end(self, episode: Any, /) -> None:
        pass


class Good(Callback):
    def on_episode_end(self, *, episode: Any, **kwargs: Any) -> None:
        pass


@pytest.mark.parametrize(
    ("fn", "problem"),
    [
        (positional_only, "its parameter 'episode' is positional-only"),
        (wants_more, "it requires 'foo', which 'on_episode_end' does not pass"),
        (lambda episode, foo: None, "it requires 'foo', which 'on_episode_end' does not pass"),
    ],
)
def test_a_handler_that_cannot_take_the_hooks_arguments_is_refused_everywhere(
    fn: Any, problem: str
) -> None:
    message = (
        rf"handler .*{getattr(fn, '__name__', '')}.* cannot take the arguments of "
        rf"'on_episode_end': {problem}; handlers are called with keyword arguments only, those "
        rf"they name of \({EPISODE_ARGS}\), or all of them with \*\*kwargs"
    )
    with pytest.raises(ConfigError, match=message):
        Bus(on_episode_end=fn)
    with pytest.raises(ConfigError, match=message):
        Bus().add_callbacks(on_episode_end=[fn])
    with pytest.raises(ConfigError, match=message):
        Bus().subscribe(EpisodeEnd, fn)
    with pytest.raises(ConfigError, match=message):
        check_callbacks(on_episode_end=fn)


def test_a_class_hook_method_with_a_bad_signature_is_refused_as_class_and_instance() -> None:
    message = r"handler BadMethod.on_episode_end cannot take the arguments of 'on_episode_end'"
    for item in (BadMethod, BadMethod(), [Good, BadMethod]):
        with pytest.raises(ConfigError, match=message):
            Bus(item)
        with pytest.raises(ConfigError, match=message):
            check_callbacks(item)


async def test_async_handlers_are_checked_too() -> None:
    async def late(episode: Any, foo: Any) -> None:
        pass

    with pytest.raises(ConfigError, match=r"handler .*late cannot take the arguments"):
        Bus(on_train_result=late)


async def test_every_way_to_take_the_arguments_is_accepted() -> None:
    seen: list[str] = []

    def named_all(*, event: Any, algorithm: Any, metrics_logger: Any, result: Any) -> None:
        seen.append("all named")  # no **kwargs, but every argument has a parameter

    def with_defaults(first: Any = None, *args: Any, event: Any, **kwargs: Any) -> None:
        seen.append("defaults")

    def tagged(tag: str, *, event: Any, **kwargs: Any) -> None:
        seen.append(tag)

    class Methods:  # duck-typed, with a staticmethod and a classmethod hook
        @staticmethod
        def on_train_result(*, event: Any, **kwargs: Any) -> None:
            seen.append("static")

        @classmethod
        def on_evaluate_start(cls, **kwargs: Any) -> None:
            seen.append("class")

    async with Bus(
        Methods,
        on_train_result=[named_all, with_defaults, functools.partial(tagged, "partial")],
    ) as bus:
        bus.subscribe(TrainResult, lambda event, **kw: seen.append("lambda"))
        await bus.publish(TrainResult())
    assert seen == ["static", "all named", "defaults", "partial", "lambda"]


async def test_a_handler_without_kwargs_gets_exactly_the_names_it_declares() -> None:
    """SPEC: RLlib's plain functions run unchanged, e.g. f(algorithm, metrics_logger, result)."""
    seen: list[Any] = []

    def write_buffer(algorithm: Any, metrics_logger: Any, result: Any) -> None:
        seen.append(("rllib", algorithm, metrics_logger, result))

    def nothing() -> None:
        seen.append("nothing")

    async def only_result(result: Any) -> None:
        seen.append(("async", result))

    class OnlyEpisode(Callback):
        def on_episode_end(self, episode: Any) -> None:
            seen.append(("method", episode))

    async with Bus(OnlyEpisode, on_train_result=[write_buffer, nothing, only_result]) as bus:
        bus.subscribe(EpisodeEnd, wants_episode_only)
        await bus.publish(TrainResult(), algorithm="algo", metrics_logger="ml", result={"a": 1})
        await bus.publish(EpisodeEnd(), episode="ep")
    assert seen == [
        ("rllib", "algo", "ml", {"a": 1}),
        "nothing",
        ("async", {"a": 1}),
        ("method", "ep"),
    ]


async def test_an_optional_argument_reaches_only_handlers_that_take_it() -> None:
    """``draft`` came after SPEC's table: naming every other argument is still enough."""
    assert "draft" in OPTIONAL_LIVE_ARGS
    seen: list[Any] = []

    def named_specs(*, event: Any, algorithm: Any, metrics_logger: Any, result: Any) -> None:
        seen.append("named SPEC's")

    def named_draft(*, event: Any, draft: Any, **kwargs: Any) -> None:
        seen.append(draft)

    def any_kwargs(**kwargs: Any) -> None:
        seen.append(sorted(kwargs))

    async with Bus(on_train_result=[named_specs, named_draft, any_kwargs]) as bus:
        await bus.publish(TrainResult(), draft="the draft")
    assert seen == [
        "named SPEC's",
        "the draft",
        ["algorithm", "draft", "event", "metrics_logger", "result"],
    ]


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("MyCb", r"callbacks_class must be .*got the string 'MyCb'; pass the class itself"),
        (["A", "B"], r"callbacks_class\[0\] must be .*got the string 'A'"),
        (dict, r"got the class dict, which neither subclasses hookbus.kernel.Callback nor"),
        (types, r"got <module 'types'.*\(module\); pass a hookbus.kernel.Callback subclass"),
        (3, r"got 3 \(int\)"),
        ([Good, None], r"callbacks_class\[1\] must be .*got None \(NoneType\)"),
        (len, r"got the callable <built-in function len>; pass plain callables per hook"),
    ],
)
def test_what_is_not_a_callback_class_or_instance_is_named(item: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        check_callbacks(item)
    with pytest.raises(ConfigError, match=message):
        Bus(item)


def test_a_class_needing_arguments_is_refused_before_anything_is_built() -> None:
    built: list[str] = []

    class Counts(Callback):
        def __init__(self) -> None:
            built.append("Counts")

        def on_episode_end(self, **kwargs: Any) -> None:
            pass

    class NeedsPath(Callback):
        def __init__(self, path: str) -> None:
            self.path = path

    message = (
        r"callbacks_class\[1\]: cannot instantiate callback class .*NeedsPath with no "
        r"arguments \(it requires 'path'\); pass an instance instead, e\.g\. NeedsPath\(\.\.\.\)"
    )
    with pytest.raises(ConfigError, match=message):
        check_callbacks([Counts, NeedsPath])
    bus = Bus()
    with pytest.raises(ConfigError, match=message):
        bus.add_callbacks([Counts, NeedsPath], on_train_result=lambda **kw: None)
    assert built == []  # checked first: nothing instantiated, nothing added
    assert bus.statistics().subscribers == {}


def test_check_callbacks_instantiates_nothing_and_accepts_instances(tmp_path: Any) -> None:
    built: list[int] = []

    class Counts(Callback):
        def __init__(self) -> None:
            built.append(1)

        def on_episode_end(self, **kwargs: Any) -> None:
            pass

    recorder = Recorder(tmp_path / "run.msgpack")
    check_callbacks([Counts, recorder, Good()], on_error="log", on_episode_end=lambda **kw: None)
    recorder.close()
    assert built == []


def test_unknown_hooks_options_and_plugins_are_refused_by_check_callbacks() -> None:
    with pytest.raises(ConfigError, match=r"unknown hook 'on_episode_ennd' \(did you mean"):
        check_callbacks(on_episode_ennd=lambda **kw: None)
    with pytest.raises(ConfigError, match="unknown on_error policy 'ignore'; allowed: 'raise'"):
        check_callbacks(on_error="ignore")
    with pytest.raises(ConfigError, match="unknown plugin 'nope'; installed plugins:"):
        check_callbacks(plugins=["nope"])
    with pytest.raises(ConfigError, match="plugins must be True, False or a list"):
        check_callbacks(plugins="nope")


def test_a_partial_of_a_class_is_built_with_its_arguments() -> None:
    # RLlib's examples pass functools.partial(SelfPlayCallback, win_rate_threshold=0.95).
    class Threshold(Callback):
        def __init__(self, threshold: float) -> None:
            super().__init__()
            self.threshold = threshold

        def on_train_result(self, **kwargs: Any) -> None:
            pass

    check_callbacks(functools.partial(Threshold, threshold=0.5))
    bus = Bus([functools.partial(Threshold, threshold=0.5)])
    (built,) = bus.callbacks
    assert isinstance(built, Threshold)
    assert built.threshold == 0.5
    with pytest.raises(
        ConfigError,
        match=r"cannot instantiate callback class .*Threshold with the partial's arguments: "
        r"got an unexpected keyword argument 'limit'",
    ):
        check_callbacks([functools.partial(Threshold, 0.5, limit=1)])
    with pytest.raises(ConfigError, match=r"got the class dict, which neither subclasses"):
        check_callbacks(functools.partial(dict, a=1))
