"""Cost of dispatching one episode hook, against a hand-written floor and the usual peers.

Every case carries the payload a real episode hook carries: the event plus six live objects
(episode, env_runner, metrics_logger, env, rl_module, env_index), delivered as keyword
arguments to trivial receivers; the same for an event type of a user's own of the same size
(``StepLike``, EpisodeStep's fields), which must cost what the hook's does. Run:
``python bench/dispatch.py [--quick]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import anyio
import msgspec

sys.path.insert(0, str(Path(__file__).parent))
from typing import ClassVar

from _timing import best_ns, best_ns_async, ratio_table

from hookbus.events import BaseEvent, EpisodeStep, TrainResult
from hookbus.kernel import LIVE_ARGS, Bus, Callback


class StepLike(BaseEvent, frozen=True, kw_only=True, omit_defaults=True, tag="bench.step_like"):
    """An event type of a user's own, of EpisodeStep's size and fields, with its live args."""

    live_args: ClassVar[tuple[str, ...]] = LIVE_ARGS["on_episode_step"]

    episode_id: str = ""
    env_index: int = 0
    action: Any = None
    reward: float = 0.0
    observation: Any = None
    info: dict[str, Any] = msgspec.field(default_factory=dict)
    terminated: bool = False
    truncated: bool = False
    agents: list[Any] | None = None


EVENT = EpisodeStep(source="env_runner:0", seq=1, episode_id="e", reward=1.0)
USER_EVENT = StepLike(source="env_runner:0", seq=1, episode_id="e", reward=1.0)
LIVE: dict[str, Any] = {
    "episode": object(),
    "env_runner": object(),
    "metrics_logger": object(),
    "env": object(),
    "rl_module": object(),
    "env_index": 0,
}
EP, RUNNER, LOGGER, ENV, MODULE, INDEX = LIVE.values()
SYNC_STEP = "step path, 1 class + 2 callables (sync)"
USER_PUB = "publish user event, 1 class + 2 callables (sync)"
USER_NONE = "publish user event, 0 subscribers"
ASYNC_STEP = "step path, 3 async handlers"


def receiver(*, event: Any, **kwargs: Any) -> None:
    """Do nothing: the cost measured is the dispatch's."""


async def areceiver(*, event: Any, **kwargs: Any) -> None:
    """Do nothing, asynchronously."""


class StepCallback(Callback):
    def on_episode_step(self, *, event: Any, **kwargs: Any) -> None:
        pass


class StepLikeCallback(Callback):
    def on_step_like(self, *, event: Any, **kwargs: Any) -> None:
        pass


def make_receivers(n: int) -> list[Any]:
    # Distinct function objects, as distinct user handlers would be.
    def make() -> Any:
        def fn(*, event: Any, **kwargs: Any) -> None:
            pass

        return fn

    return [make() for _ in range(n)]


# --- floors ---------------------------------------------------------------------------------


def floor_loop(fns: list[Any]) -> Any:
    def loop(n: int) -> None:
        for _ in range(n):
            for fn in fns:
                fn(
                    event=EVENT,
                    episode=EP,
                    env_runner=RUNNER,
                    metrics_logger=LOGGER,
                    env=ENV,
                    rl_module=MODULE,
                    env_index=INDEX,
                )

    return loop


def afloor_loop(fns: list[Any]) -> Any:
    async def loop(n: int) -> None:
        for _ in range(n):
            for fn in fns:
                await fn(
                    event=EVENT,
                    episode=EP,
                    env_runner=RUNNER,
                    metrics_logger=LOGGER,
                    env=ENV,
                    rl_module=MODULE,
                    env_index=INDEX,
                )

    return loop


# --- hookbus --------------------------------------------------------------------------------


def publish_loop(bus: Bus, event: BaseEvent = EVENT) -> Any:
    async def loop(n: int) -> None:
        publish = bus.publish
        for _ in range(n):
            await publish(event, **LIVE)

    return loop


def step_path_loop(bus: Bus) -> Any:
    """The runners' per-step path: a held dispatcher, positional live arguments."""
    step = bus.dispatcher(EpisodeStep)

    async def loop(n: int) -> None:
        for _ in range(n):
            call = step.call
            if call is not None:
                if step.is_async:
                    await call(EVENT, EP, RUNNER, LOGGER, ENV, MODULE, INDEX)
                else:
                    call(EVENT, EP, RUNNER, LOGGER, ENV, MODULE, INDEX)

    return loop


def has_subscribers_loop(bus: Bus) -> Any:
    def loop(n: int) -> None:
        has = bus.has_subscribers
        for _ in range(n):
            if has(TrainResult):
                raise AssertionError("no subscriber expected")

    return loop


# --- peers ----------------------------------------------------------------------------------


def pluggy_loop(n_receivers: int) -> Any:
    import pluggy

    spec, impl = pluggy.HookspecMarker("bench"), pluggy.HookimplMarker("bench")

    class Spec:
        @spec
        def on_episode_step(
            self,
            event: Any,
            episode: Any,
            env_runner: Any,
            metrics_logger: Any,
            env: Any,
            rl_module: Any,
            env_index: Any,
        ) -> None:
            """The hook."""

    manager = pluggy.PluginManager("bench")
    manager.add_hookspecs(Spec)
    for _ in range(n_receivers):

        class Plugin:
            @impl
            def on_episode_step(
                self,
                event: Any,
                episode: Any,
                env_runner: Any,
                metrics_logger: Any,
                env: Any,
                rl_module: Any,
                env_index: Any,
            ) -> None:
                pass

        manager.register(Plugin())
    hook = manager.hook.on_episode_step

    def loop(n: int) -> None:
        for _ in range(n):
            hook(event=EVENT, **LIVE)

    return loop


def blinker_loop(n_receivers: int) -> Any:
    import blinker

    signal = blinker.Signal()
    keep = []  # blinker holds receivers weakly
    for _ in range(n_receivers):

        def fn(sender: Any, **kwargs: Any) -> None:
            pass

        keep.append(fn)
        signal.connect(fn)

    def loop(n: int) -> None:
        for _ in range(n):
            signal.send(None, event=EVENT, **LIVE)

    loop.keep = keep  # type: ignore[attr-defined]
    return loop


def pyee_loop(n_receivers: int) -> Any:
    from pyee import EventEmitter

    emitter = EventEmitter()
    for _ in range(n_receivers):

        def fn(event: Any, **kwargs: Any) -> None:
            pass

        emitter.on("episode_step", fn)

    def loop(n: int) -> None:
        # pyee's emit() takes its event name as "event", so ours goes positionally.
        for _ in range(n):
            emitter.emit("episode_step", EVENT, **LIVE)

    return loop


async def main(quick: bool) -> None:
    n = 20_000 if quick else 200_000
    three = make_receivers(3)
    ten = make_receivers(10)
    athree = [areceiver, areceiver, areceiver]

    floor3 = best_ns(floor_loop(three), n)
    floor10 = best_ns(floor_loop(ten), n)
    afloor3 = await best_ns_async(afloor_loop(athree), n)

    empty = Bus()
    mixed = Bus(StepCallback, on_episode_step=three[:2])
    timed = Bus(StepCallback, on_episode_step=three[:2], statistics=True)
    asyncs = Bus(on_episode_step=athree)
    atimed = Bus(on_episode_step=athree, statistics=True)
    many = Bus(on_episode_step=ten)
    user = Bus(StepLikeCallback, on_step_like=three[:2])
    rows = [
        ("floor: loop calling 3 sync receivers", floor3),
        ("floor: loop awaiting 3 async receivers", afloor3),
        ("floor: loop calling 10 sync receivers", floor10),
        ("has_subscribers(), no subscriber", best_ns(has_subscribers_loop(empty), n)),
        ("publish, 0 subscribers", await best_ns_async(publish_loop(empty), n)),
        ("publish, 1 class + 2 callables (sync)", await best_ns_async(publish_loop(mixed), n)),
        (USER_PUB, await best_ns_async(publish_loop(user, USER_EVENT), n)),
        (
            "publish user event, 0 subscribers",
            await best_ns_async(publish_loop(empty, USER_EVENT), n),
        ),
        (SYNC_STEP, await best_ns_async(step_path_loop(mixed), n)),
        (f"{SYNC_STEP}, statistics=True", await best_ns_async(step_path_loop(timed), n)),
        ("publish, 3 async handlers", await best_ns_async(publish_loop(asyncs), n)),
        (ASYNC_STEP, await best_ns_async(step_path_loop(asyncs), n)),
        (f"{ASYNC_STEP}, statistics=True", await best_ns_async(step_path_loop(atimed), n)),
        ("publish, 10 sync handlers", await best_ns_async(publish_loop(many), n)),
        ("step path, 10 sync handlers", await best_ns_async(step_path_loop(many), n)),
        ("pluggy, 3 hookimpls", best_ns(pluggy_loop(3), n)),
        ("blinker, 3 receivers", best_ns(blinker_loop(3), n)),
        ("pyee, 3 listeners", best_ns(pyee_loop(3), n)),
    ]
    by_name = dict(rows)
    print(f"python {sys.version.split()[0]}, {n} dispatches per run, best of 7\n")
    print(ratio_table(rows, {"floor3": floor3}))
    pub = by_name["publish, 1 class + 2 callables (sync)"]
    step = by_name[SYNC_STEP]
    print("\ntargets (issue 9; the user-event rows: issue 29):")
    checks = [
        ("publish 3 sync <= 2.5x floor", pub / floor3, 2.5),
        ("step path 3 sync <= 1.5x floor", step / floor3, 1.5),
        ("publish 3 async <= 2x async floor", by_name["publish, 3 async handlers"] / afloor3, 2.0),
        ("publish 3 sync / pluggy < 1", pub / by_name["pluggy, 3 hookimpls"], 1.0),
        ("publish 3 sync / blinker < 1", pub / by_name["blinker, 3 receivers"], 1.0),
        ("publish 3 sync / pyee < 1", pub / by_name["pyee, 3 listeners"], 1.0),
        ("user event / hook event <= 1.1", by_name[USER_PUB] / pub, 1.1),
        ("user event / pluggy < 1", by_name[USER_PUB] / by_name["pluggy, 3 hookimpls"], 1.0),
        ("user event / blinker < 1", by_name[USER_PUB] / by_name["blinker, 3 receivers"], 1.0),
        ("user event / pyee < 1", by_name[USER_PUB] / by_name["pyee, 3 listeners"], 1.0),
    ]
    for label, value, bound in checks:
        print(f"  {label:<36} {value:6.2f}  {'ok' if value <= bound else 'MISSED'}")
    hs = by_name["has_subscribers(), no subscriber"]
    print(f"  {'has_subscribers < 100 ns':<36} {hs:6.0f}  {'ok' if hs < 100 else 'MISSED'}")

    print("\nstatistics=True, on / off (issue 19: cheap enough to stay on):")
    for label in (SYNC_STEP, ASYNC_STEP):
        print(f"  {label:<40} {by_name[f'{label}, statistics=True'] / by_name[label]:6.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10x fewer iterations")
    args = parser.parse_args()
    anyio.run(main, args.quick)
