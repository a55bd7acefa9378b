"""Single-agent episodes as state dicts and back: RLlib's ``get_state()`` / ``from_state()``.

A state is plain data (lists, dicts, numbers, strings) plus whatever the env gave (numpy
observations, infos): ``events.codec`` encodes it when those encode, and pickle always.
Lists are copied both ways, so a state is a snapshot and can rebuild several episodes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypeVar

from ._lookback import Lookback

__all__ = ("EpisodeFields", "load_single_agent", "single_agent_state")


class EpisodeFields(Protocol):
    """What a single-agent episode holds, as its state reads and writes it (``Episode``
    has these; this module knows it only through them)."""

    id_: str
    env_index: int
    t_started: int
    agent_id: Any
    module_id: str | None
    observations: list[Any]
    actions: list[Any]
    rewards: list[float]
    infos: list[dict[str, Any]]
    is_terminated: bool
    is_truncated: bool
    custom_data: dict[str, Any]
    _lookback: Lookback | None
    _temporary: dict[str, list[Any]]
    _return: float
    _start_time: float | None
    _end_time: float | None

    def __init__(self, env_index: int = 0, id_: str | None = None, t_started: int = 0) -> None:
        """Make an empty episode."""

    @property
    def t(self) -> int:
        """The step the episode is at."""
        ...


E = TypeVar("E", bound=EpisodeFields)


def single_agent_state(episode: EpisodeFields) -> dict[str, Any]:
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
