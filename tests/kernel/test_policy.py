"""Per-subscriber error policies: raise, log, collect, quarantine; cancellation passes."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from hookbus.events import EpisodeEnd
from hookbus.kernel import Bus, Callback, ConfigError, HookbusWarning, check_callbacks

pytestmark = pytest.mark.anyio


def failing(name: str, log: list[str] | None = None) -> Any:
    def handler(**kwargs: Any) -> None:
        if log is not None:
            log.append(name)
        raise ValueError(name)

    handler.__qualname__ = handler.__name__ = name
    return handler


def afailing(name: str) -> Any:
    async def handler(**kwargs: Any) -> None:
        await anyio.lowlevel.checkpoint()
        raise KeyError(name)

    handler.__qualname__ = handler.__name__ = name
    return handler


def recorder(log: list[str], name: str) -> Any:
    def handler(**kwargs: Any) -> None:
        log.append(name)

    return handler


async def test_a_subscriber_log_policy_overrides_the_bus_raise(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log: list[str] = []
    bus = Bus()
    bus.subscribe(EpisodeEnd, failing("flaky"), on_error="log")
    bus.subscribe(EpisodeEnd, recorder(log, "after"))
    with caplog.at_level(logging.ERROR, logger="hookbus"):
        await bus.publish(EpisodeEnd())
    assert log == ["after"]
    assert "flaky" in caplog.text
    assert "on_error='log'" in caplog.text
    assert bus.statistics().errors == 1


async def test_a_subscriber_raise_policy_overrides_the_bus_log() -> None:
    log: list[str] = []
    bus = Bus(on_error="log")
    bus.subscribe(EpisodeEnd, failing("strict"), on_error="raise")
    bus.subscribe(EpisodeEnd, recorder(log, "after"))
    with pytest.raises(ValueError, match="strict") as info:
        await bus.publish(EpisodeEnd())
    assert log == []
    assert "handler" in info.value.__notes__[0]
    assert "strict" in info.value.__notes__[0]


@pytest.mark.parametrize("make", [failing, afailing])
async def test_collect_runs_the_chain_then_raises_every_error_as_a_group(make: Any) -> None:
    log: list[str] = []
    bus = Bus(
        on_episode_end=[make("first"), recorder(log, "middle"), make("second")],
        on_error="collect",
    )
    with pytest.raises(ExceptionGroup) as info:
        await bus.publish(EpisodeEnd(seq=7))
    assert log == ["middle"]
    group = info.value
    assert "on_episode_end" in str(group)
    assert [str(e.args[0]) for e in group.exceptions] == ["first", "second"]
    for exc, name in zip(group.exceptions, ["first", "second"], strict=True):
        assert exc.__notes__ == [
            f"hookbus: raised by handler {__name__}.{name} of hook 'on_episode_end' (seq=7)"
        ]
    assert bus.statistics().errors_by_hook == {"on_episode_end": 2}


async def test_collect_with_no_error_raises_nothing() -> None:
    log: list[str] = []
    bus = Bus(on_episode_end=[recorder(log, "a")], on_error="collect")
    await bus.publish(EpisodeEnd())
    assert log == ["a"]


async def test_a_raise_handler_after_collected_errors_joins_the_group() -> None:
    log: list[str] = []
    bus = Bus(on_error="collect")
    bus.subscribe(EpisodeEnd, failing("collected"))
    bus.subscribe(EpisodeEnd, failing("stops", log), on_error="raise")
    bus.subscribe(EpisodeEnd, recorder(log, "never"))
    with pytest.raises(ExceptionGroup) as info:
        await bus.publish(EpisodeEnd())
    assert log == ["stops"]
    assert [str(e.args[0]) for e in info.value.exceptions] == ["collected", "stops"]


async def test_mixed_policies_in_one_chain(caplog: pytest.LogCaptureFixture) -> None:
    log: list[str] = []

    class Lenient(Callback):
        on_error = "log"

        def on_episode_end(self, **kwargs: Any) -> None:
            raise RuntimeError("lenient")

    bus = Bus(Lenient, on_episode_end=[recorder(log, "f")])
    bus.subscribe(EpisodeEnd, failing("q"), on_error="quarantine")
    bus.subscribe(EpisodeEnd, failing("strict", log))
    with caplog.at_level(logging.ERROR, logger="hookbus"):
        with pytest.raises(ValueError, match="strict") as info:
            await bus.publish(EpisodeEnd())
    assert log == ["f", "strict"]
    assert "strict" in info.value.__notes__[0]
    assert "lenient" in caplog.text
    assert bus.statistics().errors == 3


@pytest.mark.parametrize("make", [failing, afailing])
async def test_quarantine_unsubscribes_after_n_failures_with_a_warning(make: Any) -> None:
    log: list[str] = []
    logging.getLogger("hookbus").disabled = True
    try:
        bus = Bus(on_episode_end=[make("bad"), recorder(log, "good")], on_error="quarantine")
        for _ in range(2):
            await bus.publish(EpisodeEnd())
        with pytest.warns(HookbusWarning, match=rf"quarantined handler {__name__}.bad .* 3 fail"):
            await bus.publish(EpisodeEnd())
        await bus.publish(EpisodeEnd())
    finally:
        logging.getLogger("hookbus").disabled = False
    assert log == ["good"] * 4
    stats = bus.statistics()
    assert stats.quarantined == {"on_episode_end": (f"{__name__}.bad",)}
    assert stats.errors == 3
    assert stats.subscribers == {"on_episode_end": 1}


async def test_quarantine_after_is_settable(caplog: pytest.LogCaptureFixture) -> None:
    bus = Bus(quarantine_after=1)
    bus.subscribe(EpisodeEnd, failing("once"), on_error="quarantine")
    with caplog.at_level(logging.CRITICAL, logger="hookbus"), pytest.warns(HookbusWarning):
        await bus.publish(EpisodeEnd())
    assert bus.has_subscribers(EpisodeEnd) is False


@pytest.mark.parametrize("policy", ["log", "collect", "quarantine"])
async def test_cancellation_is_never_swallowed(policy: str) -> None:
    log: list[str] = []

    async def slow(**kwargs: Any) -> None:
        await anyio.sleep(1)

    bus = Bus(on_error=policy)
    bus.subscribe(EpisodeEnd, slow)
    bus.subscribe(EpisodeEnd, recorder(log, "after"))
    with anyio.move_on_after(0.05) as scope:
        await bus.publish(EpisodeEnd())
    assert scope.cancelled_caught
    assert log == []
    assert bus.statistics().errors == 0


def test_unknown_policies_and_bad_quarantine_after_are_refused() -> None:
    bus = Bus()
    with pytest.raises(ConfigError, match="unknown on_error policy 'ignore'"):
        bus.subscribe(EpisodeEnd, recorder([], "f"), on_error="ignore")

    class Bad(Callback):
        on_error = "skip"

        def on_episode_end(self, **kwargs: Any) -> None:
            pass

    with pytest.raises(ConfigError, match="'skip'"):
        Bus(Bad)
    with pytest.raises(ConfigError, match="quarantine_after must be an int >= 1, got 0"):
        Bus(quarantine_after=0)
    with pytest.raises(ConfigError, match="quarantine_after"):
        check_callbacks(quarantine_after="3")
    check_callbacks(on_error="collect")
    check_callbacks(on_error="quarantine", quarantine_after=5)
