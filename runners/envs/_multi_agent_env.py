"""Multi-agent envs with RLlib's API, and a helper making one from any gymnasium env."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from .._types import AgentID
from ._context import EnvContext

__all__ = ("MultiAgentCartPole", "MultiAgentEnv", "make_multi_agent")

MultiAgentDict = dict[Any, Any]


class MultiAgentEnv(gym.Env[Any, Any]):
    """An env of several agents, each with its own observations, actions and rewards.

    RLlib's API: ``reset(seed=, options=)`` returns ``(observations, infos)`` and
    ``step(action_dict)`` returns ``(observations, rewards, terminateds, truncateds,
    infos)``, each a dict keyed by agent id. Only agents with an observation act at the
    next step, so agents may take turns, join later (their first observation) and leave
    early (``terminateds[agent_id]``); ``terminateds["__all__"]`` or
    ``truncateds["__all__"]`` ends the episode.

    Subclasses set ``possible_agents`` (every agent id that may appear; ``str`` or
    ``int``; a copy of ``agents`` if left unset, as in RLlib), ``agents`` (those in the
    current episode), and per-agent spaces in
    ``observation_spaces`` / ``action_spaces`` (or a ``gymnasium.spaces.Dict`` keyed by
    agent id in ``observation_space`` / ``action_space``).
    """

    possible_agents: list[Any]
    agents: list[Any]
    observation_spaces: dict[Any, gym.Space[Any]] | None = None
    action_spaces: dict[Any, gym.Space[Any]] | None = None

    def __init__(self) -> None:
        super().__init__()
        # As RLlib's: what a subclass left unset is inferred, so one that sets only
        # ``agents`` before calling this (RLlib's examples do) has its possible agents too.
        if not getattr(self, "agents", None):
            self.agents = list(getattr(self, "_agent_ids", ()))  # RLlib's old-stack name
        if not getattr(self, "possible_agents", None):
            self.possible_agents = list(self.agents)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[MultiAgentDict, MultiAgentDict]:
        """Start an episode; return the observations and infos of the agents that act first."""
        raise NotImplementedError

    def step(  # type: ignore[override]
        self, action_dict: MultiAgentDict
    ) -> tuple[MultiAgentDict, MultiAgentDict, MultiAgentDict, MultiAgentDict, MultiAgentDict]:
        """Apply the agents' actions; return observations, rewards, terminateds, truncateds
        and infos by agent id (``"__all__"`` in terminateds/truncateds for the episode)."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the env's resources: none here, as gymnasium's ``Env.close`` (an env
        that holds some overrides this). Written out to be typed: gymnasium 1.2.2, which
        ray[rllib] 2.60 pins, leaves ``Env.close`` unannotated."""

    def get_observation_space(self, agent_id: AgentID) -> gym.Space[Any]:
        """Return ``agent_id``'s observation space."""
        return _space_of(self, "observation", agent_id)

    def get_action_space(self, agent_id: AgentID) -> gym.Space[Any]:
        """Return ``agent_id``'s action space."""
        return _space_of(self, "action", agent_id)

    @property
    def num_agents(self) -> int:
        """The number of agents in the current episode."""
        return len(self.agents)

    @property
    def max_num_agents(self) -> int:
        """The number of agents that may appear."""
        return len(self.possible_agents)


def _space_of(env: MultiAgentEnv, kind: str, agent_id: AgentID) -> gym.Space[Any]:
    spaces = getattr(env, f"{kind}_spaces", None)
    if spaces is not None and agent_id in spaces:
        space: gym.Space[Any] = spaces[agent_id]
        return space
    whole = getattr(env, f"{kind}_space", None)
    if isinstance(whole, gym.spaces.Dict) and agent_id in whole.spaces:
        return whole.spaces[agent_id]
    raise KeyError(
        f"{type(env).__name__} has no {kind} space for agent {agent_id!r}: set "
        f"{kind}_spaces[{agent_id!r}] (or a Dict {kind}_space keyed by agent id)"
    )


def make_multi_agent(
    env_name_or_creator: str | Callable[[dict[str, Any]], gym.Env[Any, Any]],
) -> type[MultiAgentEnv]:
    """Return a MultiAgentEnv class of ``num_agents`` independent copies of a gymnasium env.

    As RLlib's helper of that name: the class takes a config dict whose ``num_agents``
    (default 1) sets the number of copies; the rest goes to each copy (keyword arguments
    of ``gymnasium.make`` for an id, the dict itself for a creator). Agent ``i`` (an int
    from 0) plays copy ``i``; it leaves when its copy ends, and the episode ends when every
    copy has (``"__all__"``: terminated once all are done, truncated if all were cut).
    """

    class MultiEnv(MultiAgentEnv):
        def __init__(self, config: dict[str, Any] | None = None) -> None:
            super().__init__()
            # A copy that stays an EnvContext, as RLlib hands each creator the context
            # (``config.worker_index`` works there); ``num_agents`` is this class's own.
            context = config if isinstance(config, EnvContext) else EnvContext(config)
            config = context.with_vector_index(context.vector_index)
            num = config.pop("num_agents", 1)
            if isinstance(num, bool) or not isinstance(num, int) or num < 1:
                raise ValueError(f"num_agents must be an int >= 1, got {num!r}")
            if isinstance(env_name_or_creator, str):
                self.envs = [gym.make(env_name_or_creator, **config) for _ in range(num)]
            else:
                self.envs = [env_name_or_creator(config) for _ in range(num)]
            self.possible_agents = list(range(num))
            self.agents = list(self.possible_agents)
            self.observation_spaces = {i: env.observation_space for i, env in enumerate(self.envs)}
            self.action_spaces = {i: env.action_space for i, env in enumerate(self.envs)}
            self.observation_space = self.envs[0].observation_space
            self.action_space = self.envs[0].action_space
            self._terminated: set[int] = set()
            self._truncated: set[int] = set()

        def reset(
            self, *, seed: int | None = None, options: dict[str, Any] | None = None
        ) -> tuple[MultiAgentDict, MultiAgentDict]:
            self._terminated, self._truncated = set(), set()
            self.agents = list(self.possible_agents)
            observations, infos = {}, {}
            for i, env in enumerate(self.envs):
                sub_seed = None if seed is None else seed + i
                observations[i], infos[i] = env.reset(seed=sub_seed, options=options)
            return observations, infos

        def step(  # type: ignore[override]
            self, action_dict: MultiAgentDict
        ) -> tuple[MultiAgentDict, MultiAgentDict, MultiAgentDict, MultiAgentDict, MultiAgentDict]:
            if not action_dict:
                raise ValueError("step() needs an action for at least one agent")
            observations, rewards, terminateds, truncateds, infos = {}, {}, {}, {}, {}
            for i, action in action_dict.items():
                obs, reward, terminated, truncated, info = self.envs[i].step(action)
                observations[i], rewards[i], infos[i] = obs, float(reward), info
                terminateds[i], truncateds[i] = bool(terminated), bool(truncated)
                if terminated:
                    self._terminated.add(i)
                elif truncated:
                    self._truncated.add(i)
                if terminated or truncated:
                    self.agents.remove(i)
            # RLlib's rule: the episode terminates once every copy ended, and counts as
            # truncated only if every copy was truncated.
            n = len(self.envs)
            terminateds["__all__"] = len(self._terminated) + len(self._truncated) == n
            truncateds["__all__"] = len(self._truncated) == n
            return observations, rewards, terminateds, truncateds, infos

        def render(self) -> Any:
            """Render every copy and join the images, as RLlib's: stacked when they are wider
            than high, else side by side."""
            images = [np.asarray(env.render()) for env in self.envs]
            wide = images[0].shape[1] > images[0].shape[0]
            return np.concatenate(images, axis=0 if wide else 1)

        def close(self) -> None:
            for env in self.envs:
                env.close()

    name = env_name_or_creator if isinstance(env_name_or_creator, str) else "env"
    MultiEnv.__name__ = MultiEnv.__qualname__ = f"MultiAgent({name})"
    return MultiEnv


MultiAgentCartPole = make_multi_agent("CartPole-v1")
"""RLlib's multi-agent CartPole: ``MultiAgentCartPole({"num_agents": 2})``, agents 0 and 1."""
# Named for where it lives, so that it pickles (to worker processes) by reference.
MultiAgentCartPole.__name__ = MultiAgentCartPole.__qualname__ = "MultiAgentCartPole"
