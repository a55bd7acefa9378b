"""Events of your own types published where the runners run reach the driver's observers."""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from hookbus.events import EpisodeEnd
from hookbus.kernel import Bus, EventStream, Recorder, read_recording
from hookbus.runners import PPOConfig

sys.path.insert(0, str(Path(__file__).parents[2]))  # so workers and actors import it too
from shop_events import OrderPlaced, ShopOnRunner


def run(config: PPOConfig) -> tuple[list[Any], list[Any]]:
    orders: list[Any] = []
    ends: list[Any] = []
    with config.callbacks(ShopOnRunner).build() as algo:
        algo.bus.subscribe(OrderPlaced, lambda *, event, **kw: orders.append(event))
        algo.bus.subscribe(EpisodeEnd, lambda *, event, **kw: ends.append(event))
        algo.train()
    return orders, ends


def check(orders: list[Any], ends: list[Any], sources: set[str]) -> None:
    by_source: dict[str, list[Any]] = defaultdict(list)
    for order in orders:
        by_source[order.source].append(order)
    assert set(by_source) == sources
    for events in by_source.values():  # in order per source, none lost
        assert [e.seq for e in events] == list(range(len(events)))
    assert sorted(o.order_id for o in orders) == sorted(e.episode_id for e in ends)


@pytest.mark.parametrize("backend", ["inline", "process"])
def test_user_events_from_runners_reach_the_drivers_observers(
    small_ppo: PPOConfig, backend: str
) -> None:
    orders, ends = run(small_ppo.env_runners(num_env_runners=2, backend=backend))
    check(orders, ends, {"shop:1", "shop:2"})


@pytest.mark.usefixtures("ray_cluster")
def test_user_events_from_ray_actors_reach_the_drivers_observers(small_ppo: PPOConfig) -> None:
    config = small_ppo.env_runners(num_env_runners=2, backend="ray", num_cpus_per_env_runner=0.5)
    orders, ends = run(config)
    check(orders, ends, {"shop:1", "shop:2"})


@pytest.mark.anyio
@pytest.mark.parametrize("backend", ["process", "ray"])
async def test_inside_an_event_loop_a_consumer_and_a_recorder_get_them(
    small_ppo: PPOConfig, backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if backend == "ray":
        request.getfixturevalue("ray_cluster")
    config = small_ppo.env_runners(
        num_env_runners=2, backend=backend, num_cpus_per_env_runner=0.5
    ).callbacks(ShopOnRunner)
    path = tmp_path / "shop.msgpack"
    consumed: list[Any] = []

    async def collect(events: EventStream) -> None:
        consumed.extend([event async for event in events])

    async with Bus([Recorder(path, hooks=["on_order_placed", "on_episode_end"])]) as bus:
        bus.consume(collect, OrderPlaced)
        async with config.build(bus=bus) as algo:
            await algo.atrain()
    # The bus closed: the consumer drained its stream and returned.
    recorded = list(read_recording(path))
    orders = [e for e in recorded if isinstance(e, OrderPlaced)]
    check(orders, [e for e in recorded if isinstance(e, EpisodeEnd)], {"shop:1", "shop:2"})
    for source in ("shop:1", "shop:2"):  # the same events, in the same order per source
        assert [e for e in consumed if e.source == source] == [
            e for e in orders if e.source == source
        ]
    assert len(consumed) == len(orders)
