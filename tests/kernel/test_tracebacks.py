"""A handler's traceback shows a source line for every frame, the compiled chain's included."""

from __future__ import annotations

import inspect
import linecache
import traceback
from typing import Any

import pytest

from hookbus.events import EpisodeEnd
from hookbus.kernel import Bus, Callback

pytestmark = pytest.mark.anyio


class Boom(Callback):
    def on_episode_end(self, **kwargs: Any) -> None:
        raise RuntimeError("boom")


class AsyncBoom(Callback):
    async def on_episode_end(self, **kwargs: Any) -> None:
        raise RuntimeError("async boom")


def quiet(**kwargs: Any) -> None:
    pass


def frames_of(exc: BaseException) -> traceback.StackSummary:
    return traceback.extract_tb(exc.__traceback__)


def assert_every_frame_has_source(exc: BaseException) -> traceback.StackSummary:
    frames = frames_of(exc)
    missing = [f"{f.filename}:{f.lineno} in {f.name}" for f in frames if not f.line]
    assert not missing, "frames without a source line:\n" + "\n".join(missing)
    return frames


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({}, id="plain"),
        pytest.param({"statistics": True}, id="statistics"),
        pytest.param({"deadline": 5.0}, id="timed"),
        pytest.param({"on_error": "collect"}, id="collect"),
    ],
)
@pytest.mark.parametrize("callback", [Boom, AsyncBoom])
async def test_every_frame_of_a_raising_handler_has_a_source_line(
    callback: type[Callback], options: dict[str, Any]
) -> None:
    bus = Bus([callback], on_episode_end=[quiet], **options)
    with pytest.raises(Exception, match=r"boom|raised") as info:
        await bus.publish(EpisodeEnd())
    exc = info.value
    if isinstance(exc, ExceptionGroup):  # "collect" raises the handlers' errors as a group
        assert_every_frame_has_source(exc)
        exc = exc.exceptions[0]
    frames = assert_every_frame_has_source(exc)
    chain = [f for f in frames if f.filename.startswith("<hookbus chain on_episode_end")]
    assert chain, [f.filename for f in frames]
    # The chain's line is the handler's call, as a reader would write it by hand.
    assert "h0(event=event" in (chain[-1].line or "")
    assert frames[-1].line == f'raise RuntimeError("{exc}")'
    formatted = "".join(traceback.format_exception(exc))
    assert "h0(event=event" in formatted


def chain_names() -> set[str]:
    return {name for name in linecache.cache if name.startswith("<hookbus chain ")}


async def test_the_chain_source_is_what_inspect_and_pdb_read() -> None:
    bus = Bus([Boom])
    with pytest.raises(RuntimeError) as info:
        await bus.publish(EpisodeEnd())
    tb = info.value.__traceback__
    codes = []
    while tb is not None:
        codes.append(tb.tb_frame.f_code)
        tb = tb.tb_next
    chain = next(c for c in codes if c.co_filename.startswith("<hookbus chain "))
    source = inspect.getsource(chain)  # what pdb's "list" and editors' debuggers read
    assert source.startswith("def dispatch_on_episode_end(event")
    assert "h0(event=event" in source


def test_chains_of_one_shape_share_one_cached_source() -> None:
    before = chain_names()
    Bus([Boom], on_episode_end=[quiet] * 11)  # a shape no other test compiles
    once = chain_names()
    assert len(once - before) == 1
    buses = [Bus([Boom], on_episode_end=[quiet] * 11) for _ in range(50)]
    assert chain_names() == once  # one entry per chain shape, not one per compile
    assert len(buses) == 50
