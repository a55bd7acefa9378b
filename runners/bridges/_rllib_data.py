"""hookbus events' fields read off RLlib's live objects (its episodes, runners and samples).

Each function reads only RLlib's public API (``get_observations(-1)``, ``is_terminated``,
``env_steps()``, ...), so the events hold what RLlib's episode holds at that hook.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from hookbus.events import AgentData

__all__ = (
    "environment_fields",
    "plain_result",
    "reset_fields",
    "sample_fields",
    "step_fields",
)


def environment_fields(env_runner: Any, env_context: Any) -> dict[str, Any]:
    """Return ``EnvironmentCreated``'s fields for ``env_runner``'s new env."""
    config = getattr(env_runner, "config", None)
    env = getattr(config, "env", None)
    return {
        "env_id": env if isinstance(env, str) else getattr(env, "__qualname__", repr(env)),
        "num_envs": int(getattr(env_runner, "num_envs", 1) or 1),
        "worker_index": int(getattr(env_runner, "worker_index", 0) or 0),
        "in_evaluation": bool(getattr(config, "in_evaluation", False)),
        "env_config": _plain(env_context) if isinstance(env_context, Mapping) else {},
    }


def reset_fields(episode: Any, multi_agent: bool) -> dict[str, Any]:
    """Return ``EpisodeStart``'s fields: the reset's observation and info (per agent)."""
    if multi_agent:
        return {"episode_id": episode.id_, "agents": _reset_agents(episode)}
    return {
        "episode_id": episode.id_,
        "observation": episode.get_observations(-1),
        "info": episode.get_infos(-1),
    }


def step_fields(episode: Any, multi_agent: bool) -> dict[str, Any]:
    """Return ``EpisodeStep``'s fields: the last env step (per agent) and how it ended."""
    if multi_agent:
        return {
            "episode_id": episode.id_,
            "agents": _step_agents(episode),
            "terminated": bool(episode.is_terminated),
            "truncated": bool(episode.is_truncated),
        }
    return {
        "episode_id": episode.id_,
        "action": episode.get_actions(-1),
        "reward": float(episode.get_rewards(-1)),
        "observation": episode.get_observations(-1),
        "info": episode.get_infos(-1),
        "terminated": bool(episode.is_terminated),
        "truncated": bool(episode.is_truncated),
    }


def sample_fields(samples: Iterable[Any] | None) -> dict[str, Any]:
    """Return ``SampleEnd``'s fields: the env steps the episode chunks hold, their ids."""
    chunks = list(samples or ())
    return {
        "num_env_steps": sum(int(chunk.env_steps()) for chunk in chunks),
        "episode_ids": [str(chunk.id_) for chunk in chunks],
    }


# --- multi-agent ------------------------------------------------------------------------------


def _reset_agents(episode: Any) -> list[AgentData]:
    observations = episode.get_observations(-1)
    infos = episode.get_infos(-1)
    return [
        AgentData(
            agent_id=agent_id,
            module_id=_module(episode, agent_id),
            observation=observation,
            info=dict(infos.get(agent_id) or {}),
        )
        for agent_id, observation in observations.items()
    ]


def _step_agents(episode: Any) -> list[AgentData]:
    # The agents that stepped at the last env step: those with an observation, an action
    # or a reward there (RLlib's getters give, per agent, only what that step held).
    observations = episode.get_observations(-1)
    actions = episode.get_actions(-1)
    rewards = episode.get_rewards(-1)
    infos = episode.get_infos(-1)
    agents = []
    for agent_id in {**observations, **actions, **rewards}:
        single = episode.agent_episodes[agent_id]
        fields: dict[str, Any] = {
            "terminated": bool(single.is_terminated),
            "truncated": bool(single.is_truncated),
        }
        if agent_id in observations:
            fields["observation"] = observations[agent_id]
        if agent_id in actions:
            fields["action"] = actions[agent_id]
        if agent_id in rewards:
            fields["reward"] = float(rewards[agent_id])
        if agent_id in infos:
            fields["info"] = dict(infos[agent_id] or {})
        agents.append(AgentData(agent_id=agent_id, module_id=_module(episode, agent_id), **fields))
    return agents


def _module(episode: Any, agent_id: Any) -> str:
    return str(episode.module_for(agent_id) or "")


def plain_result(result: Any) -> dict[str, Any]:
    """Return RLlib's ``result`` (or evaluation metrics) as data a recording can hold.

    Its ``config`` (classes, functions) is left out, and so is any value that is not a
    number, string, bool, None, numpy value or a dict or list of them.
    """
    if not isinstance(result, Mapping):
        return {}
    kept: dict[str, Any] = _plain({k: v for k, v in result.items() if k != "config"})
    return kept


_SCALARS = (str, int, float, bool, type(None), np.generic, np.ndarray)
_LEFT_OUT = object()


def _plain(value: Any) -> Any:
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, Mapping):
        items = ((str(k), _plain(v)) for k, v in value.items())
        return {k: v for k, v in items if v is not _LEFT_OUT}
    if isinstance(value, list | tuple):
        return [v for v in map(_plain, value) if v is not _LEFT_OUT]
    return _LEFT_OUT
