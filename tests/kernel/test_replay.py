"""replay(): a live run's recording, replayed into the same callbacks, gives the same results."""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hookbus.events import EpisodeEnd, EpisodeStart, EpisodeStep, SampleEnd
from hookbus.kernel import (
    Bus,
    Callback,
    ConfigError,
    HookbusWarning,
    Recorder,
    RecordingError,
    replay,
)
from hookbus.metrics import MetricsLogger
from hookbus.runners import PPOConfig

pytestmark = pytest.mark.anyio


class Deterministic(Callback):
    """Use every part of a replayed episode; keep state; log metrics of several kinds."""

    def __init__(self) -> None:
        self.episodes: list[tuple[Any, ...]] = []
        self.samples: list[int] = []

    def on_episode_step(self, *, episode: Any, **kwargs: Any) -> None:
        episode.add_temporary_timestep_data("theta", float(episode.get_observations(-1)[2]))

    def on_episode_end(self, *, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
        thetas = episode.get_temporary_timestep_data("theta")  # one per step, the last too
        assert len(thetas) == len(episode)
        self.episodes.append(
            (
                episode.id_,
                len(episode),
                episode.get_return(),
                episode.is_terminated,
                episode.get_observations().tobytes(),
                episode.get_actions().tobytes(),
                episode.get_rewards().tobytes(),
                len(episode.get_infos()),
            )
        )
        log = metrics_logger.log_value
        log("theta_abs_max", float(np.max(np.abs(thetas))), window=50)
        log("return_ema", episode.get_return(), reduce="ema", ema_coeff=0.1)
        log("longest", len(episode), reduce="max")
        log("steps_seen", len(episode), reduce="sum")
        log("returns_p", episode.get_return(), reduce="percentiles", window=30)

    def on_sample_end(self, *, samples: list[Any], **kwargs: Any) -> None:
        self.samples.append(len(samples))


async def live_run(path: Path, fmt: str) -> tuple[Deterministic, MetricsLogger]:
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_envs_per_env_runner=2)
        .training(train_batch_size=400, minibatch_size=100, num_epochs=1)
        .callbacks([Recorder(path, format=fmt), Deterministic])
        .debugging(seed=7)
    )
    async with config.build() as algo:
        await algo.atrain()
        await algo.atrain()
        callback = algo.bus.callbacks[1]
        assert isinstance(callback, Deterministic)
        return callback, algo.env_runner.metrics


CUSTOM_KEYS = ("theta_abs_max", "return_ema", "longest", "steps_seen", "returns_p")


@pytest.mark.parametrize("fmt", ["msgpack", "jsonl"])
async def test_replay_gives_the_same_callback_state_and_metrics_exactly(
    tmp_path: Path, fmt: str
) -> None:
    path = tmp_path / f"run.{fmt}"
    live, live_metrics = await live_run(path, fmt)
    again = Deterministic()
    logger = MetricsLogger()
    count = await replay(path, again, metrics_logger=logger)
    assert count > 400
    assert again.episodes == live.episodes
    assert len(again.samples) == len(live.samples)
    for key in CUSTOM_KEYS:
        assert logger.peek(key) == live_metrics.peek(key), key


async def test_replay_filters_by_hook_and_source(tmp_path: Path) -> None:
    path = tmp_path / "run.msgpack"
    await live_run(path, "msgpack")
    seen: list[Any] = []
    count = await replay(
        path,
        on_episode_end=lambda event, episode, **kw: seen.append((event.episode_id, len(episode))),
        hooks=["on_episode_end"],
        sources=["env_runner:0"],
    )
    assert count == len(seen) > 0
    # Episodes are rebuilt from every recorded step even though only ends are published.
    assert all(length >= 8 for _, length in seen)
    assert await replay(path, hooks=["on_episode_end"], sources=["nobody"]) == 0


async def test_replay_takes_an_iterable_and_a_bus() -> None:
    events = [
        EpisodeStep(source="s", seq=0, episode_id="x", reward=2.0, observation=np.zeros(2)),
        EpisodeStep(source="s", seq=1, episode_id="x", reward=3.0, terminated=True),
        EpisodeEnd(source="s", seq=2, episode_id="x", terminated=True),
        SampleEnd(source="s", seq=3, num_env_steps=2, episode_ids=["x"]),
    ]
    got: list[Any] = []

    def on_end(*, episode: Any, **kwargs: Any) -> None:
        got.append((episode.get_return(), len(episode), episode.is_terminated))

    async with Bus() as bus:
        bus.subscribe(EpisodeEnd, on_end)
        bus.subscribe(SampleEnd, lambda samples, **kw: got.append([s.id_ for s in samples]))
        assert await replay(events, bus=bus) == 4
    assert got == [(5.0, 2, True), ["x"]]


async def test_the_last_steps_flags_reach_the_replayed_episode_before_its_end() -> None:
    events = [
        EpisodeStart(source="s", seq=0, episode_id="x", observation=0),
        EpisodeStep(source="s", seq=1, episode_id="x", reward=1.0, observation=1),
        EpisodeStep(source="s", seq=2, episode_id="x", reward=1.0, observation=2, truncated=True),
        EpisodeEnd(source="s", seq=3, episode_id="x", truncated=True),
    ]
    seen: list[tuple[str, int, bool, bool]] = []

    def log(*, event: Any, episode: Any, **kwargs: Any) -> None:
        seen.append((event.hook, len(episode), episode.is_truncated, episode.is_done))

    await replay(events, on_episode_step=log, on_episode_end=log)
    assert seen == [
        ("on_episode_step", 1, False, False),
        ("on_episode_step", 2, True, True),
        ("on_episode_end", 2, True, True),
    ]


async def test_an_ends_only_recording_replays_empty_episodes_that_still_end(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ends.msgpack"
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .training(train_batch_size=200, minibatch_size=100, num_epochs=1)
        .callbacks(Recorder(path, hooks=["on_episode_end", "on_postprocess_trajectory"]))
        .debugging(seed=3)
    )
    async with config.build() as algo:
        await algo.atrain()
    seen: list[tuple[int, bool]] = []
    post: list[Any] = []
    await replay(
        path,
        on_episode_end=lambda episode, **kw: seen.append((len(episode), episode.is_done)),
        on_postprocess_trajectory=lambda episode, **kw: post.append(episode),
    )
    # No steps were recorded, so no step data; the ends and their flags still arrive, and
    # on_postprocess_trajectory gets the same (empty, finished) episode object.
    assert seen
    assert all(item == (0, True) for item in seen)
    assert len(post) == len(seen)
    assert all(episode.is_done for episode in post)


async def test_a_corrupt_file_replays_its_prefix_then_raises(tmp_path: Path) -> None:
    path = tmp_path / "run.msgpack"
    await live_run(path, "msgpack")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    ends: list[Any] = []
    with pytest.raises(RecordingError, match="truncated frame"):
        await replay(path, on_episode_end=lambda **kw: ends.append(1))
    assert ends


async def test_bus_and_callbacks_together_are_refused() -> None:
    with pytest.raises(ConfigError, match="either bus= or callbacks"):
        await replay([], Deterministic, bus=Bus())


def starts_without_ends(count: int) -> list[Any]:
    """What a recording made with hooks=["on_episode_start"] holds: episodes never end."""
    return [
        EpisodeStart(source="s", seq=i, episode_id=f"e{i}", observation=np.zeros(2))
        for i in range(count)
    ]


async def test_open_episodes_are_bounded_with_one_warning_naming_the_bound() -> None:
    class Marker:
        """Lives as long as the episode that holds it (episodes take no weak references)."""

    alive: list[weakref.ref[Marker]] = []
    most_alive = 0

    def on_start(*, episode: Any, **kwargs: Any) -> None:
        nonlocal most_alive
        episode.custom_data["marker"] = marker = Marker()
        alive.append(weakref.ref(marker))  # freed with its episode: no cycles to collect
        most_alive = max(most_alive, sum(ref() is not None for ref in alive))

    with pytest.warns(HookbusWarning, match=r"max_open_episodes=50 .* 51 were open") as caught:
        count = await replay(
            starts_without_ends(300), on_episode_start=on_start, max_open_episodes=50
        )
    assert count == 300
    assert len(caught) == 1  # once per replay, however many are dropped
    assert most_alive <= 51  # the bound, plus the one being published


async def test_the_least_recently_active_episode_is_dropped_and_a_late_event_starts_afresh() -> (
    None
):
    events = [
        *starts_without_ends(2),  # e0, e1
        EpisodeStep(source="s", seq=2, episode_id="e0", reward=1.0),  # e0 is now the newer
        EpisodeStart(source="s", seq=3, episode_id="e2"),  # drops e1, not e0
        EpisodeStep(source="s", seq=4, episode_id="e0", reward=1.0),
        EpisodeStep(source="s", seq=5, episode_id="e1", reward=1.0),
    ]
    seen: list[tuple[str, int, float]] = []

    def on_step(*, episode: Any, **kwargs: Any) -> None:
        seen.append((episode.id_, len(episode), episode.get_return()))

    with pytest.warns(HookbusWarning, match="'e1'"):
        await replay(events, on_episode_step=on_step, max_open_episodes=2)
    # e0 kept its steps; e1 came back as a fresh episode of one step.
    assert seen == [("e0", 1, 1.0), ("e0", 2, 2.0), ("e1", 1, 1.0)]


@pytest.mark.parametrize("bad", [0, -1, 1.5, "10"])
async def test_a_bad_open_episode_bound_is_refused(bad: Any) -> None:
    with pytest.raises(ConfigError, match="max_open_episodes must be an int >= 1"):
        await replay([], max_open_episodes=bad)
