"""Named services reach across backends: the seeds' global counter, from every runner."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hookbus.kernel import Bus, ConfigError
from hookbus.runners import PPOConfig

sys.path.insert(0, str(Path(__file__).parents[1]))  # so workers and actors import the helpers
import process_helpers

BACKENDS = ["inline", "process", "ray"]


@pytest.fixture(params=BACKENDS)
def two_runners(request: pytest.FixtureRequest, small_ppo: PPOConfig) -> PPOConfig:
    if request.param == "ray":
        request.getfixturevalue("ray_cluster")
    return small_ppo.env_runners(
        num_env_runners=2, backend=request.param, num_cpus_per_env_runner=0.5
    )


def test_the_global_counter_counts_every_runners_episodes(two_runners: PPOConfig) -> None:
    config = two_runners.callbacks([process_helpers.CountsEpisodes, process_helpers.ReadsServices])
    with config.build() as algo:
        algo.bus.services.provide("counter", process_helpers.GlobalCounter())
        results = [algo.train() for _ in range(2)]
        counted = algo.bus.services.get("counter").get()  # a value on the driver
    episodes = sum(r["env_runners"]["num_episodes"] for r in results)
    assert counted == episodes > 0
    # Both runners saw the one counter move: the highest total either saw is the end total.
    assert results[-1]["env_runners"]["counter_seen"] == counted
    if two_runners.backend != "inline":  # an async method runs where the service lives
        assert results[-1]["env_runners"]["async_read"] == counted
    assert results[-1]["env_runners"]["missing_is_default"] is True


def test_a_service_provided_before_build_on_a_shared_bus(two_runners: PPOConfig) -> None:
    bus = Bus()
    bus.services.provide("counter", process_helpers.GlobalCounter())
    with two_runners.callbacks(process_helpers.CountsEpisodes).build(bus=bus) as algo:
        result = algo.train()
    # The Algorithm's runners are gone; the counter is back on the bus, as it became.
    counter = bus.services.get("counter")
    assert isinstance(counter, process_helpers.GlobalCounter)
    assert counter.count == result["env_runners"]["num_episodes"]


def test_a_missing_service_is_a_config_error_naming_it(two_runners: PPOConfig) -> None:
    with two_runners.callbacks(process_helpers.CountsEpisodes).build() as algo:
        with pytest.raises(ConfigError, match="no service named 'counter'"):
            algo.train()


def test_a_failing_service_call_raises_its_error_in_the_runner(two_runners: PPOConfig) -> None:
    with two_runners.callbacks(process_helpers.CallsAFailingService).build() as algo:
        algo.bus.services.provide("counter", process_helpers.GlobalCounter())
        with pytest.raises(ZeroDivisionError, match="the service failed") as info:
            algo.train()
    assert any("on_episode_end" in note for note in info.value.__notes__)


def test_envs_reach_services_through_their_env_context(two_runners: PPOConfig) -> None:
    config = two_runners.environment(process_helpers.CountsResets)
    starts: list[str] = []
    with config.build() as algo:
        algo.bus.services.provide("counter", process_helpers.GlobalCounter())
        algo.bus.subscribe("on_episode_start", lambda *, event, **kw: starts.append(event.source))
        algo.train()
        resets = algo.bus.services.get("counter").get()
    # Every reset the envs counted began an episode that every backend reports to observers.
    assert resets == len(starts) > 0
    assert set(starts) == {"env_runner:1", "env_runner:2"}
