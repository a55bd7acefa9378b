"""A multi-agent episode: one single-agent episode per agent, stepped by the env's dicts."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from time import perf_counter
from typing import Any

from .._types import AgentID, ModuleID
from ._episode import Episode, Indices, TemporaryData, new_episode_id
from ._multi_agent_copies import EpisodeCopies

__all__ = ("ALL_AGENTS", "MultiAgentEpisode")

ALL_AGENTS = "__all__"
"""The key of ``terminateds`` / ``truncateds`` that ends the whole episode (RLlib's)."""

MappingFn = Callable[..., str]


class MultiAgentEpisode(TemporaryData, EpisodeCopies):
    """Hold one multi-agent episode: an ``Episode`` per agent, in ``agent_episodes``.

    Built from what a ``MultiAgentEnv`` returns: ``add_env_reset(observations, infos)``,
    then ``add_env_step(observations, actions, rewards, terminateds, truncateds, infos)``
    per env step, each a dict keyed by agent id. An agent acts on the step after it got an
    observation (``get_agents_to_act()``); its transition is complete when its next
    observation arrives, so in a turn-based env an action waits for the agent's next turn,
    and rewards it got meanwhile add up into that transition's reward (rewards before its
    first action, into its first; rewards after its last, into its last: the agents'
    returns always add up to every reward the env gave). An agent joins with
    its first observation and leaves when it is terminated or truncated; an agent that
    leaves without a last observation keeps its previous one as the final observation.
    ``"__all__"`` in ``terminateds`` or ``truncateds`` ends the episode and every agent.

    ``len(episode)`` counts env steps; ``get_return()`` sums the agents' returns.
    ``module_for(agent_id)`` is the module (policy) acting for an agent, decided by
    ``agent_to_module_mapping_fn(agent_id, episode)`` when the agent joins.
    ``add_temporary_timestep_data`` keeps data per env step; per agent, call it on
    ``episode.agent_episodes[agent_id]``.
    """

    __slots__ = (
        "_end_time",
        "_env_t",
        "_handed_at",
        "_hanging_actions",
        "_hanging_rewards",
        "_mapping_fn",
        "_stamps",
        "_start_time",
        "_temporary",
        "_to_act",
        "agent_episodes",
        "agent_to_module",
        "custom_data",
        "env_index",
        "id_",
        "is_terminated",
        "is_truncated",
        "t_started",
    )

    def __init__(
        self,
        env_index: int = 0,
        id_: str | None = None,
        t_started: int = 0,
        *,
        agent_to_module_mapping_fn: MappingFn | None = None,
    ) -> None:
        self.id_: str = id_ if id_ is not None else new_episode_id()
        self.env_index = env_index
        self.t_started = t_started
        """The env step this episode (or chunk) starts at."""
        self.agent_episodes: dict[Any, Episode] = {}
        """Agent id to that agent's single-agent episode, in the order agents joined."""
        self.agent_to_module: dict[Any, str] = {}
        """Agent id to the module (policy) id acting for it."""
        self.custom_data: dict[str, Any] = {}
        """Anything a callback wants to keep with the episode."""
        self.is_terminated = False
        self.is_truncated = False
        self._mapping_fn = agent_to_module_mapping_fn
        self._env_t = 0
        self._to_act: dict[Any, None] = {}  # agents with an observation to act on, in order
        self._hanging_actions: dict[Any, Any] = {}  # acted, next observation not there yet
        self._hanging_rewards: dict[Any, float] = {}  # rewards since the agent's last step
        # Per agent, the env step (1, 2, ...) that completed each of its transitions: how
        # chunk() maps env steps to each agent's own steps.
        self._stamps: dict[Any, list[int]] = {}
        self._temporary: dict[str, list[Any]] = {}
        # perf_counter() at the reset, the end and the last chunk(), as Episode's.
        self._start_time: float | None = None
        self._end_time: float | None = None
        self._handed_at: float | None = None

    # --- building (the runner's and replay's side) -------------------------------------------

    def add_env_reset(self, observations: Mapping[Any, Any], infos: Mapping[Any, Any]) -> None:
        """Record the reset: every agent with an observation joins, and acts next."""
        for agent_id, observation in observations.items():
            self._join(agent_id, observation, _info(infos, agent_id))
        self._start_time = perf_counter()

    def add_env_step(
        self,
        observations: Mapping[Any, Any],
        actions: Mapping[Any, Any],
        rewards: Mapping[Any, float],
        terminateds: Mapping[Any, bool],
        truncateds: Mapping[Any, bool],
        infos: Mapping[Any, Any],
    ) -> None:
        """Record one env step: the actions taken and what the env returned for them."""
        if self.is_done:
            raise ValueError(f"episode {self.id_} is done; it takes no more env steps")
        for agent_id in actions:
            if agent_id not in self._to_act:
                raise ValueError(
                    f"agent {agent_id!r} acted in episode {self.id_} without an observation "
                    f"to act on; agents to act: {list(self._to_act)!r}"
                )
        self._env_t += 1
        self._to_act = {}
        self._hanging_actions.update(actions)
        hanging = self._hanging_rewards
        for agent_id, reward in rewards.items():
            if agent_id in self.agent_episodes and self.agent_episodes[agent_id].is_done:
                continue  # an agent that left gets nothing more
            hanging[agent_id] = hanging.get(agent_id, 0.0) + float(reward)
        all_terminated = bool(terminateds.get(ALL_AGENTS, False))
        all_truncated = bool(truncateds.get(ALL_AGENTS, False)) and not all_terminated
        ending = all_terminated or all_truncated
        for agent_id, observation in observations.items():
            terminated, truncated = _agent_done(agent_id, terminateds, truncateds)
            if ending and not (terminated or truncated):
                terminated, truncated = all_terminated, all_truncated
            if agent_id not in self.agent_episodes:
                self._join(agent_id, observation, _info(infos, agent_id))
                if terminated or truncated:
                    self._leave(agent_id, terminated, truncated, {})
                continue
            if self.agent_episodes[agent_id].is_done:
                raise ValueError(
                    f"agent {agent_id!r} got an observation in episode {self.id_} after it "
                    f"was terminated or truncated; an agent that left cannot come back"
                )
            if agent_id not in self._hanging_actions:
                raise ValueError(
                    f"agent {agent_id!r} got an observation in episode {self.id_} but has "
                    f"not acted on its previous one"
                )
            self._complete(agent_id, observation, terminated, truncated, _info(infos, agent_id))
            if not (terminated or truncated):
                self._to_act[agent_id] = None
        # Agents that leave without an observation (or all, when "__all__" ends the episode).
        for agent_id in list(self.agent_episodes):
            if agent_id in observations or self.agent_episodes[agent_id].is_done:
                continue
            terminated, truncated = _agent_done(agent_id, terminateds, truncateds)
            if not (terminated or truncated):
                if not ending:
                    continue  # waiting for its turn
                terminated, truncated = all_terminated, all_truncated
            self._leave(agent_id, terminated, truncated, _info(infos, agent_id))
        if ending:
            self.is_terminated, self.is_truncated = all_terminated, all_truncated
            self._to_act = {}
            self._end_time = perf_counter()

    def truncate(self) -> None:
        """End the episode now, truncated (``Control.end_episode``): every agent still in it
        leaves truncated, a pending action closing with the agent's last observation."""
        for agent_id, episode in self.agent_episodes.items():
            if not episode.is_done:
                self._leave(agent_id, False, True, {})
        self._to_act = {}
        self.is_terminated, self.is_truncated = False, True
        self._end_time = perf_counter()

    def _join(self, agent_id: AgentID, observation: object, info: dict[str, Any]) -> None:
        if agent_id in self.agent_episodes:
            raise ValueError(f"agent {agent_id!r} joined episode {self.id_} twice")
        episode = Episode(self.env_index, self.id_)
        episode.agent_id = agent_id
        episode.module_id = self.module_for(agent_id)
        episode.add_reset(observation, info)
        self.agent_episodes[agent_id] = episode
        self._stamps[agent_id] = []
        self._to_act[agent_id] = None

    def _complete(
        self,
        agent_id: AgentID,
        observation: object,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
    ) -> None:
        """Close the agent's pending transition with ``observation`` and its rewards."""
        action = self._hanging_actions.pop(agent_id)
        reward = self._hanging_rewards.pop(agent_id, 0.0)
        self.agent_episodes[agent_id].add_step(
            observation, action, reward, terminated, truncated, info
        )
        self._stamps[agent_id].append(self._env_t)

    def _leave(
        self, agent_id: AgentID, terminated: bool, truncated: bool, info: dict[str, Any]
    ) -> None:
        episode = self.agent_episodes[agent_id]
        self._to_act.pop(agent_id, None)
        if agent_id in self._hanging_actions:
            # Its last action, with no observation after it: the previous one stands in.
            self._complete(agent_id, episode.observations[-1], terminated, truncated, info)
            return
        leftover = self._hanging_rewards.pop(agent_id, 0.0)
        if leftover and episode.rewards:
            episode.rewards[-1] += leftover  # rewards after its last action: its last step's
            episode._return += leftover
        episode.is_terminated, episode.is_truncated = terminated, truncated
        episode._end_time = perf_counter()

    # --- reading (the callbacks' side) --------------------------------------------------------

    def __len__(self) -> int:
        """Return the number of env steps."""
        return self._env_t

    def env_steps(self) -> int:
        """Return the number of env steps in the episode (or chunk): ``len(self)``."""
        return self._env_t

    def get_duration_s(self) -> float:
        """Return the seconds from the reset (a chunk: its start) to the final env step.

        As ``Episode.get_duration_s``: an ongoing episode's runs to now; 0.0 before the
        first env step.
        """
        start, end = self._start_time, self._end_time
        if start is None or (end is None and not self._env_t):
            return 0.0
        return (perf_counter() if end is None else end) - start

    def get_return(self) -> float:
        """Return the sum of every agent's return."""
        return float(sum(episode.get_return() for episode in self.agent_episodes.values()))

    @property
    def is_done(self) -> bool:
        """Whether the episode terminated or was truncated (``"__all__"``)."""
        return self.is_terminated or self.is_truncated

    @property
    def agent_ids(self) -> list[Any]:
        """The agents that joined, in order."""
        return list(self.agent_episodes)

    @property
    def agent_episode_ids(self) -> dict[Any, str]:
        """Agent id to the id of that agent's single-agent episode (RLlib's property)."""
        return {agent_id: episode.id_ for agent_id, episode in self.agent_episodes.items()}

    @property
    def env_t_started(self) -> int:
        """RLlib's name for ``t_started``."""
        return self.t_started

    @property
    def env_t(self) -> int:
        """The env step the episode (or chunk) is at: ``t_started + len(self)``."""
        return self.t_started + self._env_t

    def module_for(self, agent_id: AgentID) -> ModuleID:
        """Return the module (policy) id acting for ``agent_id`` (mapped once per episode)."""
        module_id = self.agent_to_module.get(agent_id)
        if module_id is None:
            if self._mapping_fn is None:
                module_id = "default_policy"
            else:
                module_id = self._mapping_fn(agent_id, self)
            self.agent_to_module[agent_id] = module_id
        return module_id

    def get_agents_to_act(self) -> list[Any]:
        """Return the agents that got an observation and act at the next env step."""
        return list(self._to_act)

    def get_agents_that_stepped(self) -> set[Any]:
        """Return the agents that got an observation at the latest env step (or the reset).

        As RLlib's: agents whose episode ended at that step are included. An agent that
        left at that step without an observation of its own (``"__all__"`` ended the
        episode) counts too: its last transition closes at that step.
        """
        stepped = set(self._to_act)
        last = self._env_t
        if last:
            stepped.update(a for a, stamps in self._stamps.items() if stamps and stamps[-1] == last)
        return stepped

    def get_observations(
        self,
        indices: Indices = None,
        agent_ids: Collection[Any] | None = None,
        *,
        neg_index_as_lookback: bool = False,
    ) -> dict[Any, Any]:
        """Return each agent's observations (indexed by the agent's own steps), by agent id.

        ``neg_index_as_lookback=True`` reaches back into each agent's lookback buffer (see
        ``cut()``), as ``Episode.get_observations`` does.
        """
        return {
            a: e.get_observations(indices, neg_index_as_lookback=neg_index_as_lookback)
            for a, e in self._agents(agent_ids)
        }

    def get_actions(
        self,
        indices: Indices = None,
        agent_ids: Collection[Any] | None = None,
        *,
        neg_index_as_lookback: bool = False,
    ) -> dict[Any, Any]:
        """Return each agent's actions, by agent id (as ``get_observations``)."""
        return {
            a: e.get_actions(indices, neg_index_as_lookback=neg_index_as_lookback)
            for a, e in self._agents(agent_ids)
        }

    def get_rewards(
        self,
        indices: Indices = None,
        agent_ids: Collection[Any] | None = None,
        *,
        neg_index_as_lookback: bool = False,
    ) -> dict[Any, Any]:
        """Return each agent's rewards, by agent id (as ``get_observations``)."""
        return {
            a: e.get_rewards(indices, neg_index_as_lookback=neg_index_as_lookback)
            for a, e in self._agents(agent_ids)
        }

    def get_infos(
        self,
        indices: Indices = None,
        agent_ids: Collection[Any] | None = None,
        *,
        neg_index_as_lookback: bool = False,
    ) -> dict[Any, Any]:
        """Return each agent's info dicts, by agent id (as ``get_observations``)."""
        return {
            a: e.get_infos(indices, neg_index_as_lookback=neg_index_as_lookback)
            for a, e in self._agents(agent_ids)
        }

    def _agents(self, agent_ids: Collection[Any] | None) -> list[tuple[Any, Episode]]:
        if agent_ids is None:
            return list(self.agent_episodes.items())
        return [(a, self.agent_episodes[a]) for a in agent_ids if a in self.agent_episodes]

    @classmethod
    def from_chunks(
        cls,
        *,
        id_: str,
        env_index: int,
        t_started: int,
        env_steps: int,
        agent_episodes: list[tuple[Episode, list[int]]],
        agent_to_module: dict[Any, str],
        terminated: bool = False,
        truncated: bool = False,
    ) -> MultiAgentEpisode:
        """Rebuild a chunk from its parts (a worker process sent it).

        ``agent_episodes`` pairs each agent's chunk (its ``agent_id`` set) with the env
        steps that completed its transitions, as ``completed_at()`` gave them.
        """
        part = cls(env_index, id_, t_started)
        part.is_terminated, part.is_truncated = terminated, truncated
        part.agent_to_module = dict(agent_to_module)
        part._env_t = env_steps
        for agent, completed_at in agent_episodes:
            part.agent_episodes[agent.agent_id] = agent
            part._stamps[agent.agent_id] = list(completed_at)
        return part

    def completed_at(self, agent_id: AgentID) -> list[int]:
        """Return the env steps (from 1 in this chunk) that completed the agent's transitions."""
        return list(self._stamps[agent_id])

    def agent_steps(self) -> int:
        """Return the number of agent steps (transitions) over all agents."""
        return sum(len(episode) for episode in self.agent_episodes.values())

    def __repr__(self) -> str:
        state = (
            "terminated" if self.is_terminated else "truncated" if self.is_truncated else "ongoing"
        )
        return (
            f"MultiAgentEpisode(id_={self.id_!r}, env_index={self.env_index}, len={len(self)}, "
            f"agents={self.agent_ids!r}, return={self.get_return():g}, {state})"
        )


def _agent_done(
    agent_id: AgentID, terminateds: Mapping[Any, bool], truncateds: Mapping[Any, bool]
) -> tuple[bool, bool]:
    terminated = bool(terminateds.get(agent_id, False))
    truncated = bool(truncateds.get(agent_id, False)) and not terminated
    return terminated, truncated


def _info(infos: Mapping[Any, Any], agent_id: AgentID) -> dict[str, Any]:
    info = infos.get(agent_id)
    return dict(info) if isinstance(info, Mapping) else {}
