"""A multi-agent episode's copies: the chunks ``sample()`` hands out, RLlib's ``cut()``, and
its state (RLlib's ``get_state()`` / ``from_state()``).

A chunk keeps, per agent, the transitions that completed in its env steps; ``_stamps``
(per agent, the env step that completed each transition) maps env steps to agent steps.
A state is plain data as ``_episode_state`` says, agent ids as lists of pairs.
``EpisodeCopies`` is a base of ``MultiAgentEpisode`` that knows it only by the attributes
declared in it.
"""

from __future__ import annotations

import bisect
import copy
from collections.abc import Callable
from time import perf_counter
from typing import TYPE_CHECKING, Any, Self

from .._types import AgentID
from ._episode import Episode
from ._episode_state import load_single_agent, single_agent_state

__all__ = ("EpisodeCopies",)


class EpisodeCopies:
    """A multi-agent episode's ``chunk()``, ``cut()``, ``get_state()`` and ``from_state()``
    (a base of ``MultiAgentEpisode``)."""

    if not TYPE_CHECKING:  # no slots of its own; mypy checks the attributes declared below
        __slots__ = ()
    if TYPE_CHECKING:  # what MultiAgentEpisode holds
        id_: str
        env_index: int
        t_started: int
        agent_episodes: dict[Any, Episode]
        agent_to_module: dict[Any, str]
        custom_data: dict[str, Any]
        is_terminated: bool
        is_truncated: bool
        _mapping_fn: Callable[..., str] | None
        _env_t: int
        _stamps: dict[Any, list[int]]
        _to_act: dict[Any, None]
        _hanging_actions: dict[Any, Any]
        _hanging_rewards: dict[Any, float]
        _start_time: float | None
        _end_time: float | None
        _handed_at: float | None

        def __init__(
            self,
            env_index: int = 0,
            id_: str | None = None,
            t_started: int = 0,
            *,
            agent_to_module_mapping_fn: Callable[..., str] | None = None,
        ) -> None: ...
        @property
        def is_done(self) -> bool: ...
        @property
        def env_t(self) -> int: ...

        _temporary: dict[str, list[Any]]

    def chunk(self, start: int) -> Self:
        """Return a copy of the env steps from ``start`` on: each agent's transitions that
        completed at those steps (agents with none are left out, as RLlib prunes them).

        Its duration runs from the previous ``chunk()`` (or the reset) to now, or to the
        episode's end, as ``Episode.chunk``'s."""
        episode = self
        part = type(episode)(episode.env_index, episode.id_, episode.t_started + start)
        part._mapping_fn = episode._mapping_fn
        part.agent_to_module = episode.agent_to_module
        part.custom_data = episode.custom_data
        part.is_terminated, part.is_truncated = episode.is_terminated, episode.is_truncated
        part._env_t = episode._env_t - start
        for agent_id, agent in episode.agent_episodes.items():
            stamps = episode._stamps[agent_id]
            first = bisect.bisect_right(stamps, start)  # transitions completed by `start`
            if first == len(stamps):
                continue
            part.agent_episodes[agent_id] = agent.chunk(first)
            part._stamps[agent_id] = stamps[first:]
        now = perf_counter()
        part._start_time = episode._start_time if start == 0 else episode._handed_at
        part._end_time = episode._end_time if episode._end_time is not None else now
        episode._handed_at = now
        return part

    def cut(self, len_lookback_buffer: int = 0) -> Self:
        """Return the successor chunk (RLlib's ``cut``): the episode goes on in it.

        The successor has this episode's id, no env steps yet (``len`` 0) and starts where
        this one is (``env_t_started == env_t == self.env_t``), with a deep copy of
        ``custom_data``. Each agent still in the episode goes on in it with its own
        successor (``Episode.cut``: its last observation first, ``t_started`` its ``t``),
        taking along as lookback buffer its steps of the last ``len_lookback_buffer`` env
        steps. What is pending goes along too: agents to act, an action waiting for the
        agent's next observation (its transition completes in the successor), rewards
        not yet given. Agents that left stay behind. This episode keeps everything; it
        must not be done.
        """
        episode = self
        if len_lookback_buffer < 0:
            raise ValueError(f"len_lookback_buffer={len_lookback_buffer!r} must be >= 0")
        if episode.is_done:
            raise RuntimeError(
                f"cannot cut() multi-agent episode {episode.id_}: it is done (terminated or "
                "truncated), so no successor chunk can continue it"
            )
        successor = type(episode)(
            episode.env_index,
            episode.id_,
            episode.env_t,
            agent_to_module_mapping_fn=episode._mapping_fn,
        )
        successor.agent_to_module = dict(episode.agent_to_module)
        successor.custom_data = copy.deepcopy(episode.custom_data)
        horizon = episode._env_t - len_lookback_buffer  # transitions completed after it go along
        for agent_id, agent in episode.agent_episodes.items():
            if agent.is_done:
                continue
            stamps = episode._stamps[agent_id]
            successor.agent_episodes[agent_id] = agent.cut(
                len(stamps) - bisect.bisect_right(stamps, horizon)
            )
            successor._stamps[agent_id] = []
        # What is pending goes on in the successor: who acts next, actions waiting for their
        # agent's next observation, rewards not yet given to a transition.
        successor._to_act = dict(episode._to_act)
        successor._hanging_actions = dict(episode._hanging_actions)
        successor._hanging_rewards = dict(episode._hanging_rewards)
        successor._start_time = perf_counter()
        return successor

    def get_state(self, *, exclude_agent_to_module_mapping_fn: bool = False) -> dict[str, Any]:
        """Return everything the episode holds, its agents' episodes included (RLlib's).

        The mapping function goes into the state unless excluded (RLlib's keyword: leave
        it out to encode the state with ``events.codec``); ``MultiAgentEpisode.from_state``
        rebuilds the episode.
        """
        state = {
            "id_": self.id_,
            "env_index": self.env_index,
            "env_t_started": self.t_started,
            "env_t": self.env_t,
            "agent_episodes": [
                [agent_id, single_agent_state(agent)]
                for agent_id, agent in self.agent_episodes.items()
            ],
            "completed_at": [[a, list(steps)] for a, steps in self._stamps.items()],
            "agent_to_module": [[a, m] for a, m in self.agent_to_module.items()],
            "agents_to_act": list(self._to_act),
            "hanging_actions": [[a, action] for a, action in self._hanging_actions.items()],
            "hanging_rewards": [[a, reward] for a, reward in self._hanging_rewards.items()],
            "is_terminated": self.is_terminated,
            "is_truncated": self.is_truncated,
            "custom_data": dict(self.custom_data),
            "temporary_timestep_data": {k: list(v) for k, v in self._temporary.items()},
            "_start_time": self._start_time,
            "_end_time": self._end_time,
        }
        if not exclude_agent_to_module_mapping_fn:
            state["agent_to_module_mapping_fn"] = self._mapping_fn
        return state

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Self:
        """Rebuild an episode from ``get_state()``'s output (ValueError if malformed)."""
        try:
            started = int(state["env_t_started"])
            episode = cls(
                int(state["env_index"]),
                str(state["id_"]),
                started,
                agent_to_module_mapping_fn=state.get("agent_to_module_mapping_fn"),
            )
            episode._env_t = int(state["env_t"]) - started
            for agent_id, agent_state in state["agent_episodes"]:
                agent = load_single_agent(Episode, agent_state)
                episode.agent_episodes[_key(agent_id)] = agent
            stamps = {_key(a): [int(s) for s in steps] for a, steps in state["completed_at"]}
            episode._stamps = stamps
            episode.agent_to_module = {_key(a): m for a, m in state["agent_to_module"]}
            episode._to_act = dict.fromkeys(_key(a) for a in state["agents_to_act"])
            episode._hanging_actions = {_key(a): x for a, x in state["hanging_actions"]}
            episode._hanging_rewards = {_key(a): float(r) for a, r in state["hanging_rewards"]}
            if set(stamps) != set(episode.agent_episodes) or episode._env_t < 0:
                raise ValueError("completed_at names other agents than agent_episodes")
            episode.is_terminated = bool(state["is_terminated"])
            episode.is_truncated = bool(state["is_truncated"])
            episode.custom_data = dict(state["custom_data"])
            temporary = state["temporary_timestep_data"]
            episode._temporary = {k: list(v) for k, v in temporary.items()}
            episode._start_time, episode._end_time = state["_start_time"], state["_end_time"]
        except KeyError as exc:
            raise ValueError(f"not a multi-agent episode state: it has no {exc}") from exc
        except (TypeError, ValueError) as exc:
            raise ValueError(f"not a multi-agent episode state: {exc}") from exc
        return episode


def _key(agent_id: AgentID | list[Any]) -> AgentID:
    # A decoded state gives lists where tuples were (msgpack, JSON); agent ids are hashable.
    return tuple(agent_id) if isinstance(agent_id, list) else agent_id
