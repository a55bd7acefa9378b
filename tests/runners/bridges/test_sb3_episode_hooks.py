"""The SB3 bridge's episode hooks, as EpisodePublisher publishes them: async step chains run
on the bridge's loop, a step's Control is acted on or said to be ignored, once."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import anyio.lowlevel
import pytest
import sniffio
from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env

from hookbus.events import EpisodeStep
from hookbus.kernel import Control
from hookbus.runners.bridges import sb3_callback


@pytest.fixture(autouse=True)
def sb3_logdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SB3's learn() writes its log into $SB3_LOGDIR: here, the test's folder."""
    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path / "sb3"))


def make_model(n_envs: int) -> Any:
    env = make_vec_env("CartPole-v1", n_envs=n_envs, seed=0)
    return PPO("MlpPolicy", env, n_steps=64, n_epochs=1, seed=0, device="cpu")


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_an_async_step_handler_runs_on_the_bridges_loop_for_every_step(backend: str) -> None:
    seen: list[tuple[str, str, int, bool]] = []

    async def on_episode_step(*, event: EpisodeStep, episode: Any, **kwargs: Any) -> None:
        await anyio.lowlevel.checkpoint()
        library = sniffio.current_async_library()
        seen.append((library, threading.current_thread().name, len(episode), event.terminated))

    model = make_model(2)
    bridge = sb3_callback(on_episode_step=on_episode_step, async_backend=backend)
    model.learn(128, callback=bridge)
    bridge.close()
    assert len(seen) == model.num_timesteps == 128
    assert {library for library, _, _, _ in seen} == {backend}
    assert threading.current_thread().name not in {name for _, name, _, _ in seen}
    assert any(final for _, _, _, final in seen)  # the final steps are published too


def test_a_control_from_an_async_step_handler_stops_learn() -> None:
    async def stop(*, episode: Any, **kwargs: Any) -> Control | None:
        await anyio.lowlevel.checkpoint()
        return Control(stop_training=True) if len(episode) == 5 else None

    model = make_model(1)
    model.learn(10_000, callback=sb3_callback(on_episode_step=stop))
    assert model.num_timesteps == 5  # SB3 stopped at the step whose handler asked


def test_a_step_control_sb3_cannot_act_on_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[int] = []

    def end(*, episode: Any, **kwargs: Any) -> Control:
        calls.append(len(episode))
        return Control(end_episode=True)

    model = make_model(2)
    with caplog.at_level(logging.WARNING, logger="hookbus.runners.bridges"):
        model.learn(64, callback=sb3_callback(on_episode_step=end))
    assert len(calls) == model.num_timesteps  # every step published: the episodes went on
    said = [r.getMessage() for r in caplog.records if "cannot end one sub-env" in r.getMessage()]
    assert len(said) == 1
    assert "an on_episode_step handler returned Control(end_episode" in said[0]
