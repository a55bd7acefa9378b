"""Episodes as state dicts and back: RLlib's ``get_state()`` / ``from_state()`` pairs.

A state is plain data (lists, dicts, numbers, strings) plus whatever the env gave (numpy
observations, infos): ``events.codec`` encodes it when those encode, and pickle always.
Lists are copied both ways, so a state is a snapshot and can rebuild several episodes.
Keys keyed by agent id are lists of pairs (JSON and MessagePack keys lose int ids).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from ._lookback import Lookback

if TYPE_CHECKING:
    from ._episode import Episode
    from ._multi_agent_episode import MultiAgentEpisode

__all__ = ("load_multi_agent", "load_single_agent", "multi_agent_state", "single_agent_state")

E = TypeVar("E", bound="Episode")
M = TypeVar("M", bound="MultiAgentEpisode")


def single_agent_state(episode: Episode) -> dict[str, Any]:
    """Return everything ``episode`` holds; the lookback buffer leads each list."""
    before = episode._lookback
    size = len(before) if before is not None else 0
    lists = {
        what: ([*getattr(before, what)] if before is not None else [])
        + list(getattr(episode, what))
        for what in ("observations", "actions", "rewards", "infos")
    }
    return {
        "id_": episode.id_,
        "env_index": episode.env_index,
        "agent_id": episode.agent_id,
        "module_id": episode.module_id,
        **lists,
        "len_lookback_buffer": size,
        "is_terminated": episode.is_terminated,
        "is_truncated": episode.is_truncated,
        "t_started": episode.t_started,
        "t": episode.t,
        "custom_data": dict(episode.custom_data),
        "temporary_timestep_data": {k: list(v) for k, v in episode._temporary.items()},
        "_start_time": episode._start_time,
        "_end_time": episode._end_time,
    }


def load_single_agent(cls: type[E], state: Mapping[str, Any]) -> E:
    """Rebuild an episode of class ``cls`` from ``single_agent_state()``'s output.

    ValueError (naming the problem) if the lists do not fit together or ``t`` disagrees.
    """
    try:
        size = int(state["len_lookback_buffer"])
        observations, actions = list(state["observations"]), list(state["actions"])
        rewards, infos = list(state["rewards"]), list(state["infos"])
        own = len(actions) - size
        if size < 0 or own < 0 or len(rewards) != len(actions):
            raise ValueError("as many rewards as actions, and no more lookback than actions")
        if (observations or infos) and not len(observations) == len(infos) == len(actions) + 1:
            raise ValueError("one observation and info more than actions")
        if state["t"] != state["t_started"] + own:
            raise ValueError(f"t={state['t']!r} is not t_started + the episode's steps")
        episode = cls(int(state["env_index"]), str(state["id_"]), int(state["t_started"]))
        episode.observations, episode.infos = observations[size:], infos[size:]
        episode.actions, episode.rewards = actions[size:], rewards[size:]
        if size:
            episode._lookback = Lookback(
                observations[:size], actions[:size], rewards[:size], infos[:size]
            )
        episode.agent_id, episode.module_id = state["agent_id"], state["module_id"]
        episode.is_terminated = bool(state["is_terminated"])
        episode.is_truncated = bool(state["is_truncated"])
        episode.custom_data = dict(state["custom_data"])
        episode._temporary = {k: list(v) for k, v in state["temporary_timestep_data"].items()}
        episode._start_time, episode._end_time = state["_start_time"], state["_end_time"]
    except KeyError as exc:
        raise ValueError(f"not a single-agent episode state: it has no {exc}") from exc
    except (TypeError, ValueError) as exc:
        raise ValueError(f"not a single-agent episode state: {exc}") from exc
    episode._return = float(sum(episode.rewards))
    return episode


def multi_agent_state(episode: MultiAgentEpisode, *, with_mapping_fn: bool) -> dict[str, Any]:
    """Return everything a multi-agent episode holds, its agents' episodes included."""
    state = {
        "id_": episode.id_,
        "env_index": episode.env_index,
        "env_t_started": episode.t_started,
        "env_t": episode.env_t,
        "agent_episodes": [
            [agent_id, single_agent_state(agent)]
            for agent_id, agent in episode.agent_episodes.items()
        ],
        "completed_at": [[a, list(steps)] for a, steps in episode._stamps.items()],
        "agent_to_module": [[a, m] for a, m in episode.agent_to_module.items()],
        "agents_to_act": list(episode._to_act),
        "hanging_actions": [[a, action] for a, action in episode._hanging_actions.items()],
        "hanging_rewards": [[a, reward] for a, reward in episode._hanging_rewards.items()],
        "is_terminated": episode.is_terminated,
        "is_truncated": episode.is_truncated,
        "custom_data": dict(episode.custom_data),
        "temporary_timestep_data": {k: list(v) for k, v in episode._temporary.items()},
        "_start_time": episode._start_time,
        "_end_time": episode._end_time,
    }
    if with_mapping_fn:
        state["agent_to_module_mapping_fn"] = episode._mapping_fn
    return state


def load_multi_agent(cls: type[M], agent_cls: type[Episode], state: Mapping[str, Any]) -> M:
    """Rebuild a multi-agent episode from ``multi_agent_state()``'s output."""
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
            episode.agent_episodes[_key(agent_id)] = load_single_agent(agent_cls, agent_state)
        episode._stamps = {_key(a): [int(s) for s in steps] for a, steps in state["completed_at"]}
        episode.agent_to_module = {_key(a): m for a, m in state["agent_to_module"]}
        episode._to_act = dict.fromkeys(_key(a) for a in state["agents_to_act"])
        episode._hanging_actions = {_key(a): action for a, action in state["hanging_actions"]}
        episode._hanging_rewards = {_key(a): float(r) for a, r in state["hanging_rewards"]}
        if set(episode._stamps) != set(episode.agent_episodes) or episode._env_t < 0:
            raise ValueError("completed_at names other agents than agent_episodes")
        episode.is_terminated = bool(state["is_terminated"])
        episode.is_truncated = bool(state["is_truncated"])
        episode.custom_data = dict(state["custom_data"])
        episode._temporary = {k: list(v) for k, v in state["temporary_timestep_data"].items()}
        episode._start_time, episode._end_time = state["_start_time"], state["_end_time"]
    except KeyError as exc:
        raise ValueError(f"not a multi-agent episode state: it has no {exc}") from exc
    except (TypeError, ValueError) as exc:
        raise ValueError(f"not a multi-agent episode state: {exc}") from exc
    return episode


def _key(agent_id: Any) -> Any:
    # A decoded state gives lists where tuples were (msgpack, JSON); agent ids are hashable.
    return tuple(agent_id) if isinstance(agent_id, list) else agent_id
