"""``Publisher(offload_sync=...)``: sync handlers of such hooks run in worker threads.

An all-sync chain runs as a whole in one; in a chain that also holds ``async def``
handlers, each sync handler runs in a thread of its own turn, the chain's order and error
handling unchanged, so that it may block (the Algorithm's hooks: a sync facade waiting for
worker processes) while the event loop goes on.
"""

from __future__ import annotations

import threading
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from hookbus.events import EpisodeStart, TrainResult
from hookbus.kernel import Bus, Control, Publisher

pytestmark = pytest.mark.anyio


class Trace:
    """Handlers that note their name and whether they ran on the loop's thread."""

    def __init__(self) -> None:
        self.loop_thread = threading.get_ident()
        self.calls: list[tuple[str, bool]] = []

    def note(self, name: str) -> None:
        self.calls.append((name, threading.get_ident() == self.loop_thread))

    async def first(self, **kwargs: Any) -> None:
        await anyio.lowlevel.checkpoint()
        self.note("first")

    def blocking(self, *, result: Any, **kwargs: Any) -> None:
        # What the loop must not be kept from: here a plain wait, in the Algorithm's case a
        # sync facade whose answer needs the loop.
        self.note("blocking")
        result["seen_by_blocking"] = True

    async def last(self, *, result: Any, **kwargs: Any) -> None:
        self.note("last" if result.get("seen_by_blocking") else "last, too early")


async def test_a_mixed_chain_runs_its_sync_handlers_in_threads_in_order() -> None:
    trace = Trace()
    with Bus(on_train_result=[trace.first, trace.blocking, trace.last]) as bus:
        publisher = Publisher(bus, "algorithm", offload_sync=[TrainResult], result={})
        await publisher.publish(TrainResult)
    assert trace.calls == [("first", True), ("blocking", False), ("last", True)]


async def test_other_hooks_and_publishers_keep_sync_handlers_on_the_loop() -> None:
    trace = Trace()
    with Bus(
        on_train_result=[trace.first, trace.blocking, trace.last],
        on_episode_start=[trace.first, lambda **kw: trace.note("start")],
    ) as bus:
        await Publisher(bus, "algorithm", result={}).publish(TrainResult)
        await Publisher(bus, "runner", offload_sync=[TrainResult]).publish(
            EpisodeStart, episode_id="e", env_index=0
        )
    assert trace.calls == [
        ("first", True),
        ("blocking", True),
        ("last", True),
        ("first", True),
        ("start", True),
    ]


async def test_a_sync_handler_in_a_thread_raises_as_on_the_loop() -> None:
    def broken(**kwargs: Any) -> None:
        raise ValueError("boom")

    async def after(**kwargs: Any) -> None:
        raise AssertionError("the chain must stop at the raising handler")

    trace = Trace()
    with Bus(on_train_result=[trace.first, broken, after]) as bus:
        publisher = Publisher(bus, "algorithm", offload_sync=[TrainResult])
        with pytest.raises(ValueError, match="boom") as caught:
            await publisher.publish(TrainResult)
    assert any("broken" in note for note in caught.value.__notes__)


async def test_a_sync_handler_in_a_thread_under_on_error_log_is_counted() -> None:
    def broken(**kwargs: Any) -> None:
        raise ValueError("boom")

    trace = Trace()
    with Bus(on_train_result=[broken, trace.first], on_error="log") as bus:
        publisher = Publisher(bus, "algorithm", offload_sync=[TrainResult])
        await publisher.publish(TrainResult)
    assert trace.calls == [("first", True)]


async def test_a_sync_handler_in_a_thread_may_return_a_control() -> None:
    async def checkpoint(**kwargs: Any) -> Control:
        return Control(checkpoint=True)

    def stop(**kwargs: Any) -> Control:
        assert threading.get_ident() != loop_thread
        return Control(stop_training=True)

    loop_thread = threading.get_ident()
    with Bus(on_train_result=[checkpoint, stop], statistics=True) as bus:
        publisher = Publisher(bus, "algorithm", offload_sync=[TrainResult])
        await publisher.publish(TrainResult)
        await publisher.publish(TrainResult)
        statistics = bus.statistics()
    control = publisher.take_control()
    assert control is not None
    assert control.requested == ("stop_training", "checkpoint")  # in Control's field order
    assert control.requested_by["stop_training"][0].endswith("stop")
    calls = {name: stats.calls for name, stats in statistics.handlers["on_train_result"].items()}
    assert sorted(calls.values()) == [2, 2]
