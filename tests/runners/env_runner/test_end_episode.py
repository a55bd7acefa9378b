"""Control(end_episode=True) from on_episode_step: the episode ends there, truncated."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from hookbus.kernel import (
    Callback,
    Control,
    Recorder,
    check_lifecycle,
    read_recording,
    replay,
)
from hookbus.runners import (
    MultiAgentCartPole,
    MultiAgentEpisode,
    PPOConfig,
)

sys.path.insert(0, str(Path(__file__).parents[1]))  # so worker processes import the helpers too
import process_helpers


class Ends(Callback):
    """End episodes at ``at`` env steps; keep what on_episode_end saw."""

    def __init__(self, at: int = 5) -> None:
        super().__init__()
        self.at = at
        self.ended: list[tuple[Any, Any]] = []

    def on_episode_step(self, *, episode: Any, **kwargs: Any) -> Control | None:
        return Control(end_episode=True) if len(episode) >= self.at else None

    def on_episode_end(self, *, event: Any, episode: Any, **kwargs: Any) -> None:
        self.ended.append((event, episode))


class AsyncEnds(Ends):
    async def on_episode_step(  # type: ignore[override]
        self, *, episode: Any, **kwargs: Any
    ) -> Control | None:
        return Control(end_episode=True) if len(episode) >= self.at else None


@pytest.mark.anyio
@pytest.mark.parametrize("cls", [Ends, AsyncEnds])
async def test_a_step_handler_ends_its_episode_truncated(cls: type[Ends], tmp_path: Path) -> None:
    ends = cls(at=5)
    path = tmp_path / "run.msgpack"
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_envs_per_env_runner=3)
        .callbacks([ends, Recorder(path)])
        .debugging(seed=1)
    )
    async with config.build() as algo:
        chunks = await algo.env_runner.asample(num_timesteps=120, random_actions=True)
        control = algo.env_runner.take_control()
    assert sum(map(len, chunks)) == 120
    assert len(ends.ended) >= 20
    for event, episode in ends.ended:
        assert event.ended_early
        assert (event.terminated, event.truncated) == (False, True)
        assert len(episode) == 5
        assert episode.is_truncated
    # Episodes never run on past the request: every finished chunk ends at step 5.
    assert all(len(c) + c.t_started == 5 for c in chunks if c.is_done)
    assert control is not None
    assert control.end_episode
    assert control.requested_by["end_episode"] == (f"{type(ends).__name__}.on_episode_step",)
    # The recording passes the lifecycle check, and replay rebuilds the same episodes.
    assert check_lifecycle(read_recording(path)).episodes >= 20
    again = Ends(at=10_000)  # never ends anything itself: replay only
    await replay(path, [again])
    assert [(e.ended_early, len(ep), ep.is_truncated) for e, ep in again.ended] == [
        (e.ended_early, len(ep), ep.is_truncated) for e, ep in ends.ended
    ]


def test_train_reports_the_request_and_learns_from_truncated_episodes() -> None:
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
        .callbacks(process_helpers.EndsAtFive)
        .debugging(seed=0)
    )
    with config.build() as algo:
        result = algo.train()
    control = result["control"]
    assert control["end_episode"] is True
    assert control["stop_training"] is False
    assert control["requested_by"]["end_episode"] == ["EndsAtFive.on_episode_step"]
    assert control["reason"] == "five steps are enough"
    assert result["env_runners"]["episode_len_max"] == 5
    assert result["env_runners"]["num_env_steps_sampled"] == 200


def test_worker_processes_end_episodes_too() -> None:
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_env_runners=1, backend="process")
        .training(train_batch_size=200, minibatch_size=50, num_epochs=1)
        .callbacks(process_helpers.EndsAtFive)
        .debugging(seed=0)
    )
    with config.build() as algo:
        result = algo.train()
    assert result["env_runners"]["episode_len_max"] == 5
    assert result["env_runners"]["episode_len_min"] == 5


def test_a_multi_agent_episode_ends_with_every_agent_truncated(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    ends = Ends(at=4)
    config = (
        PPOConfig()
        .environment(MultiAgentCartPole, env_config={"num_agents": 2})
        .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=process_helpers.policy_of_agent)
        .training(train_batch_size=100, minibatch_size=50, num_epochs=1)
        .callbacks([ends, Recorder(path, format="jsonl")])
        .debugging(seed=0)
    )
    with config.build() as algo:
        result = algo.train()
    assert result["env_runners"]["episode_len_max"] == 4
    for event, episode in ends.ended:
        assert isinstance(episode, MultiAgentEpisode)
        assert event.ended_early
        assert episode.is_truncated
        assert not episode.get_agents_to_act()
        for agent in episode.agent_episodes.values():
            assert len(agent) == 4
            assert agent.is_truncated
    assert check_lifecycle(read_recording(path)).episodes >= len(ends.ended)


def test_other_requests_from_a_step_handler_are_reported() -> None:
    def stop_soon(*, episode: Any, **kwargs: Any) -> Control | None:
        return Control(stop_training=True, reason="seen enough") if len(episode) == 3 else None

    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .training(train_batch_size=100, minibatch_size=50, num_epochs=1)
        .callbacks(on_episode_step=stop_soon)
        .debugging(seed=0)
    )
    with config.build() as algo:
        result = algo.train()
    assert result["control"]["stop_training"] is True
    assert result["control"]["end_episode"] is False
    assert result["env_runners"]["episode_len_max"] > 3  # nothing ended early
