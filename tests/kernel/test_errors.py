"""Handler exceptions: propagated with a note (default) or logged, counted and survived."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from hookbus.events import EpisodeEnd, TrainResult
from hookbus.kernel import Bus, Callback, ConfigError

pytestmark = pytest.mark.anyio


class Boom(Callback):
    def on_episode_end(self, **kwargs: Any) -> None:
        raise RuntimeError("boom")


async def async_boom(**kwargs: Any) -> None:
    raise KeyError("async boom")


async def test_raise_policy_propagates_with_hook_and_handler_named() -> None:
    ran: list[str] = []
    bus = Bus(Boom, on_episode_end=lambda **kw: ran.append("after"))
    with pytest.raises(RuntimeError, match="boom") as info:
        await bus.publish(EpisodeEnd())
    assert info.value.__notes__ == [
        "hookbus: raised by handler Boom.on_episode_end of hook 'on_episode_end'"
    ]
    assert ran == []  # the chain stops at the failing handler
    assert bus.statistics().errors == 1


async def test_raise_policy_names_the_failing_handler_in_an_async_chain() -> None:
    ran: list[str] = []
    bus = Bus(on_train_result=[lambda **kw: ran.append("first"), async_boom])
    with pytest.raises(KeyError, match="async boom") as info:
        await bus.publish(TrainResult())
    assert ran == ["first"]
    assert info.value.__notes__[0].endswith("async_boom of hook 'on_train_result'")


async def test_log_policy_logs_counts_and_runs_the_rest(caplog: pytest.LogCaptureFixture) -> None:
    ran: list[str] = []
    bus = Bus(Boom, on_error="log", on_episode_end=[async_boom, lambda **kw: ran.append("last")])
    with caplog.at_level(logging.ERROR, logger="hookbus"):
        await bus.publish(EpisodeEnd())
        await bus.publish(EpisodeEnd())
    assert ran == ["last", "last"]
    stats = bus.statistics()
    assert stats.errors == 4
    assert stats.errors_by_hook == {"on_episode_end": 4}
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0].startswith(
        "hookbus: handler Boom.on_episode_end of hook 'on_episode_end' raised RuntimeError('boom')"
    )
    assert caplog.records[0].exc_info is not None


async def test_base_exceptions_are_never_swallowed_by_the_log_policy() -> None:
    class Exit(Callback):
        def on_episode_end(self, **kwargs: Any) -> None:
            raise KeyboardInterrupt

    bus = Bus(Exit, on_error="log")
    with pytest.raises(KeyboardInterrupt):
        await bus.publish(EpisodeEnd())


def sync_wrapper(fn: Any) -> Any:
    """A decorator that forgets ``async``: its wrapper returns the coroutine, unawaited."""

    def wrapper(**kwargs: Any) -> Any:
        return fn(**kwargs)

    return wrapper


async def test_a_sync_handler_returning_a_coroutine_is_an_error_not_a_silent_skip() -> None:
    ran: list[str] = []

    async def log_end(**kwargs: Any) -> None:
        ran.append("never")

    bus = Bus(on_episode_end=[sync_wrapper(log_end), lambda **kw: ran.append("after")])
    # No "coroutine was never awaited" warning either (filterwarnings=error would fail it).
    with pytest.raises(ConfigError, match=r"wrapper of hook 'on_episode_end' is not async") as info:
        await bus.publish(EpisodeEnd())
    assert "async def" in str(info.value)
    assert info.value.__notes__[0].endswith("wrapper of hook 'on_episode_end'")
    assert ran == []
    assert bus.statistics().errors == 1


async def test_a_sync_handler_returning_a_coroutine_is_counted_under_the_log_policy(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ran: list[str] = []

    async def on_result(**kwargs: Any) -> None:
        ran.append("never")

    bus = Bus(on_error="log", on_train_result=[sync_wrapper(on_result), async_noop])
    with caplog.at_level(logging.ERROR, logger="hookbus"):
        await bus.publish(TrainResult())
    assert bus.statistics().errors_by_hook == {"on_train_result": 1}
    assert ran == []
    assert "returned coroutine" in caplog.records[0].getMessage()


async def test_sync_handlers_may_return_plain_values() -> None:
    bus = Bus(on_episode_end=[lambda **kw: 42, lambda **kw: "ignored"])
    await bus.publish(EpisodeEnd())
    assert bus.statistics().errors == 0


async def async_noop(**kwargs: Any) -> None:
    pass
