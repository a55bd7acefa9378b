"""Multi-agent episodes stepped with random actions, their events as the runner publishes them,
and a field-by-field comparison of two ``MultiAgentEpisode``s."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from hookbus.events import (
    BaseEvent,
    EpisodeCreated,
    EpisodeEnd,
    EpisodeStart,
    EpisodeStep,
    PostprocessTrajectory,
    SampleEnd,
)

# The runner's publishing helpers (issue 18's contract); not public names yet.
from hookbus.runners import (
    Episode,
    MultiAgentCartPole,
    MultiAgentEnv,
    MultiAgentEpisode,
    reset_agents,
    step_agents,
)

SOURCE = "env_runner:0"


class TurnBased(MultiAgentEnv):
    """Two agents, "a" and "b", take turns; "b" leaves early (``terminateds["b"]``).

    The waiting agent gets a reward too, so rewards add up while its action hangs.
    The episode is truncated (``"__all__"``) after ``max_turns`` turns.
    """

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.possible_agents = ["a", "b"]
        box = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.observation_spaces = {"a": box, "b": box}
        self.action_spaces = {"a": gym.spaces.Discrete(3), "b": gym.spaces.Discrete(3)}
        self.max_turns = (config or {}).get("max_turns", 12)
        self.turn = 0
        self.b_leaves = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[Any, Any], dict[Any, Any]]:
        gym.Env.reset(self, seed=seed)  # seeds np_random (MultiAgentEnv.reset is abstract)
        self.turn = 0
        self.agents = ["a", "b"]
        self.b_leaves = int(self.np_random.integers(3, 8))
        return {"a": self._observation()}, {"a": {"turn": 0}}

    def step(  # type: ignore[override]
        self, action_dict: dict[Any, Any]
    ) -> tuple[dict[Any, Any], ...]:
        (acting,) = action_dict
        self.turn += 1
        rewards = {acting: float(action_dict[acting]) - 1.0}
        terminateds: dict[Any, bool] = {"__all__": False}
        if "b" in self.agents and acting == "a":
            rewards["b"] = 0.25
        if "b" in self.agents and self.turn == self.b_leaves:
            terminateds["b"] = True  # leaves without a last observation
            self.agents.remove("b")
        following = "b" if acting == "a" and "b" in self.agents else "a"
        observations = {following: self._observation()}
        infos = {following: {"turn": self.turn}}
        truncateds = {"__all__": self.turn >= self.max_turns}
        return observations, rewards, terminateds, truncateds, infos

    def _observation(self) -> Any:
        return self.np_random.uniform(-1, 1, 2).astype(np.float32)


def module_of(agent_id: Any, episode: Any) -> str:
    return f"module_{agent_id}"


@dataclass
class Run:
    """What a runner would have: its episodes (whole, live) and the events it published."""

    episodes: list[MultiAgentEpisode] = field(default_factory=list)
    events: list[BaseEvent] = field(default_factory=list)

    def publish(self, event_type: type[BaseEvent], **data: Any) -> None:
        self.events.append(event_type(source=SOURCE, seq=len(self.events), **data))


def run_episodes(env: MultiAgentEnv, num_episodes: int, seed: int = 0) -> Run:
    """Step ``num_episodes`` episodes with random actions, publishing as the runner does."""
    run = Run()
    for space in (env.get_action_space(a) for a in env.possible_agents):
        space.seed(seed)
    steps = 0
    for n in range(num_episodes):
        episode = MultiAgentEpisode(agent_to_module_mapping_fn=module_of)
        ids = {"episode_id": episode.id_, "env_index": 0}
        run.publish(EpisodeCreated, **ids)
        observations, infos = env.reset(seed=seed + n)
        episode.add_env_reset(observations, infos)
        agents = reset_agents(episode, observations, infos)
        run.publish(EpisodeStart, **ids, observation=None, info={}, agents=agents)
        while not episode.is_done:
            actions = {a: env.get_action_space(a).sample() for a in episode.get_agents_to_act()}
            observations, rewards, terminateds, truncateds, infos = env.step(actions)
            data = observations, actions, rewards, terminateds, truncateds, infos
            episode.add_env_step(*data)
            steps += 1
            run.publish(
                EpisodeStep,
                **ids,
                agents=step_agents(episode, *data),
                terminated=episode.is_terminated,
                truncated=episode.is_truncated,
            )
        run.publish(
            EpisodeEnd, **ids, terminated=episode.is_terminated, truncated=episode.is_truncated
        )
        run.publish(PostprocessTrajectory, **ids)
        run.episodes.append(episode)
    run.publish(SampleEnd, num_env_steps=steps, episode_ids=[e.id_ for e in run.episodes])
    return run


def cartpole_run() -> Run:
    return run_episodes(MultiAgentCartPole({"num_agents": 2}), num_episodes=3, seed=3)


def turn_based_run() -> Run:
    return run_episodes(TurnBased(), num_episodes=3, seed=5)


def assert_same_agent_episode(got: Episode, want: Episode) -> None:
    assert type(got) is Episode
    assert (type(got.agent_id), got.agent_id) == (type(want.agent_id), want.agent_id)
    assert got.module_id == want.module_id
    assert (got.id_, got.env_index, got.t_started) == (want.id_, want.env_index, want.t_started)
    assert len(got) == len(want)
    assert len(got.observations) == len(want.observations)
    for o, w in zip(got.observations, want.observations, strict=True):
        np.testing.assert_array_equal(o, w, strict=True)
    assert [(type(a), np.asarray(a).tolist()) for a in got.actions] == [
        (type(a), np.asarray(a).tolist()) for a in want.actions
    ]
    assert got.rewards == want.rewards
    assert got.infos == want.infos
    assert got.get_return() == want.get_return()
    assert (got.is_terminated, got.is_truncated) == (want.is_terminated, want.is_truncated)


def assert_same_episode(got: Any, want: MultiAgentEpisode) -> None:
    """Assert that ``got`` is a MultiAgentEpisode equal to ``want`` in every field."""
    assert type(got) is MultiAgentEpisode
    assert (got.id_, got.env_index, got.t_started) == (want.id_, want.env_index, want.t_started)
    assert (len(got), got.env_t, got.agent_steps()) == (len(want), want.env_t, want.agent_steps())
    assert [(type(a), a) for a in got.agent_ids] == [(type(a), a) for a in want.agent_ids]
    assert got.agent_to_module == want.agent_to_module
    assert [got.module_for(a) for a in want.agent_ids] == [
        want.module_for(a) for a in want.agent_ids
    ]
    assert got.get_return() == want.get_return()
    assert (got.is_terminated, got.is_truncated) == (want.is_terminated, want.is_truncated)
    for agent_id, agent in want.agent_episodes.items():
        assert_same_agent_episode(got.agent_episodes[agent_id], agent)
