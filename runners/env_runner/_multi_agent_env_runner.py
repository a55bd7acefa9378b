"""The multi-agent EnvRunner: steps MultiAgentEnvs, one module per policy, the same hooks."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from hookbus.events import EpisodeStart, EpisodeStep
from hookbus.kernel import ConfigError, MultiAgentEpisode, reset_agents, step_agents

from .._exploration import make_exploration
from ..config import is_multi_agent, mapping_fn, module_spaces
from ..envs import MultiAgentEnv, env_maker, env_name, mark_env_failure
from ._env_runner import EnvRunner

if TYPE_CHECKING:
    from ..config import AlgorithmConfig

__all__ = ("MultiAgentEnvRunner", "MultiAgentVectorEnv", "env_runner_class")


class MultiAgentVectorEnv:
    """Hold ``num_envs`` MultiAgentEnvs, stepped one by one (``envs[i].unwrapped`` is one).

    Exceptions of a sub-env's ``step()`` and ``reset()`` are marked as the env's
    (``is_env_failure``), as the single-agent vector env's are.
    """

    def __init__(self, makers: list[Callable[[], Any]]) -> None:
        self.envs: list[MultiAgentEnv] = []
        for make in makers:
            env = make()
            if not isinstance(env.unwrapped, MultiAgentEnv):
                env.close()
                raise ConfigError(
                    f"config.multi_agent() needs a MultiAgentEnv, but the env made a "
                    f"{type(env.unwrapped).__name__}; wrap a single-agent env with "
                    f"make_multi_agent() (docs/multi_agent.md)"
                )
            self.envs.append(env)
        self.num_envs = len(self.envs)

    @property
    def unwrapped(self) -> MultiAgentVectorEnv:
        """This vector env (RLlib's callbacks receive ``env.unwrapped``)."""
        return self

    def reset(self, i: int, seed: int | None = None) -> tuple[dict[Any, Any], dict[Any, Any]]:
        """Reset sub-env ``i``; return its observations and infos by agent id."""
        try:
            observations, infos = self.envs[i].reset(seed=seed)
        except Exception as exc:
            mark_env_failure(exc, "reset()")
            raise
        return observations, infos

    def step(self, i: int, actions: dict[Any, Any]) -> tuple[dict[Any, Any], ...]:
        """Step sub-env ``i`` with ``actions`` by agent id; return its five dicts."""
        try:
            result: tuple[dict[Any, Any], ...] = self.envs[i].step(actions)
        except Exception as exc:
            mark_env_failure(exc, "step()")
            raise
        return result

    def close(self) -> None:
        """Close every sub-env."""
        for env in self.envs:
            env.close()


class MultiAgentEnvRunner(EnvRunner):
    """Sample ``MultiAgentEpisode``s, publishing the same hooks as the single-agent runner.

    Each env step steps every sub-env once, with an action for each agent that got an
    observation (``episode.get_agents_to_act()``): one forward pass per module over the
    agents it acts for, across sub-envs. ``on_episode_step`` fires after every env step,
    ``len(episode)`` counts env steps, and a finished episode's sub-env is reset at once
    (``on_episode_created`` before the reset, ``on_episode_start`` after it). ``module`` is a
    mapping of module id to module (``module[module_id].forward_exploration(obs, rng)``).
    """

    is_multi_agent = True

    def _make_env(self, seed: int | None) -> MultiAgentVectorEnv:
        config = self.config
        if config.restart_failed_sub_environments:
            raise ConfigError(
                "restart_failed_sub_environments is not supported with multi-agent envs yet; "
                "leave it False (restart_failed_env_runners restarts whole runners)"
            )
        makers = [
            env_maker(config.env, self.env_context.with_vector_index(i))
            for i in range(config.num_envs_per_env_runner)
        ]
        self._mapping = mapping_fn(config)
        return MultiAgentVectorEnv(makers)

    def _make_exploration(self) -> Any:
        self.spaces = module_spaces(self.config, self.env.envs[0].unwrapped)
        """Each module's (observation space, action space)."""
        return {
            module_id: make_exploration(self.config.exploration, action_space)
            for module_id, (_, action_space) in self.spaces.items()
        }

    def _make_episode(self, i: int) -> MultiAgentEpisode:
        return MultiAgentEpisode(env_index=i, agent_to_module_mapping_fn=self._mapping)

    async def _reset_all(self, limit: int | None = None) -> None:
        """Start one episode per sub-env (the first ``limit`` only; the others idle)."""
        count = self.num_envs if limit is None else min(limit, self.num_envs)
        self._episodes = [None] * self.num_envs
        self._resetting = [False] * self.num_envs  # a sub-env is reset as its episode ends
        # Seed the first reset only, as the single-agent runner does.
        seed, self._reset_seed = self._reset_seed, None
        for i in range(count):
            sub_seed = None if seed is None else seed + i
            self._episodes[i] = await self._start_episode(i, sub_seed)
        self._obs = True  # reset: the next sample() goes on from here

    async def _start_episode(self, i: int, seed: int | None = None) -> MultiAgentEpisode:
        """Create (publishing on_episode_created), reset sub-env ``i``, publish the start."""
        episode: MultiAgentEpisode = await self._new_episode(i)
        observations, infos = self.env.reset(i, seed)
        episode.add_env_reset(observations, infos)
        fields = None
        if self._publisher.wants(EpisodeStart):
            fields = {"agents": reset_agents(episode, observations, infos)}
        await self._episode_started(episode, fields)
        return episode

    async def _run(
        self,
        num_timesteps: int | None,
        num_episodes: int | None,
        explore: bool,
        random_actions: bool,
        done: list[Any],
        dropped: list[Any] | None = None,
    ) -> int:
        """Step until the budget is met; return the number of env steps."""
        episodes, publisher = self._episodes, self._publisher
        exact = dropped is not None
        max_steps = num_timesteps if num_timesteps is not None else float("inf")
        max_episodes = num_episodes if num_episodes is not None else float("inf")
        started = sum(episode is not None for episode in episodes)
        steps = 0
        timestep_before = self._timestep
        on_step, next_seq = self._on_step, publisher.next_seq
        while steps < max_steps and len(done) < max_episodes:
            actions = self._agent_actions(explore, random_actions)
            for i in range(self.num_envs):
                episode = episodes[i]
                if episode is None:  # an idle sub-env (exact sampling)
                    continue
                if exact and (steps >= max_steps or len(done) >= max_episodes):
                    dropped.append(episode)  # type: ignore[union-attr]
                    episodes[i] = None
                    continue
                obs, rewards, terminateds, truncateds, infos = self.env.step(i, actions[i])
                episode.add_env_step(obs, actions[i], rewards, terminateds, truncateds, infos)
                steps += 1
                agents = None
                if on_step.call is not None:  # someone listens to on_episode_step
                    agents = step_agents(
                        episode, obs, actions[i], rewards, terminateds, truncateds, infos
                    )
                step: dict[str, Any] | None = {"agents": agents}
                if not episode.is_done:
                    if on_step.call is None:
                        continue
                    event = EpisodeStep(
                        source=self.source,
                        seq=next_seq(),
                        episode_id=episode.id_,
                        env_index=i,
                        agents=agents,
                    )
                    if not await self._step_hook(event, episode, i):
                        continue
                    step = None  # a handler ended it: its step is published
                await self._episode_ended(episode, step)
                done.append(episode)
                if exact and (len(done) >= max_episodes or started >= max_episodes):
                    episodes[i] = None
                else:
                    episodes[i] = await self._start_episode(i)
                    started += 1
            self._timestep = timestep_before + steps
        return steps

    def _agent_actions(self, explore: bool, random_actions: bool) -> list[dict[Any, Any]]:
        """Return each sub-env's action dict: one forward pass per module over its agents."""
        actions: list[dict[Any, Any]] = [{} for _ in range(self.num_envs)]
        batches: dict[str, tuple[list[Any], list[tuple[int, Any]]]] = {}
        for i, episode in enumerate(self._episodes):
            if episode is None:
                continue
            for agent_id in episode.get_agents_to_act():
                rows, keys = batches.setdefault(episode.module_for(agent_id), ([], []))
                rows.append(episode.agent_episodes[agent_id].observations[-1])
                keys.append((i, agent_id))
        for module_id, (rows, keys) in batches.items():
            if random_actions or self.module is None:
                space = self.spaces[module_id][1]
                chosen: Any = [space.sample() for _ in keys]
            else:
                chosen = self._exploration[module_id].get_actions(
                    self.module[module_id],
                    np.asarray(rows),
                    self._rng,
                    self._timestep,
                    explore,
                )
                chosen = chosen.tolist() if np.ndim(chosen) == 1 else list(chosen)
            for (i, agent_id), action in zip(keys, chosen, strict=True):
                actions[i][agent_id] = action
        return actions

    def compute_single_action(
        self, observation: Any, *, explore: bool | None = None, policy_id: str | None = None
    ) -> Any:
        """Return ``policy_id``'s action for one observation (the only policy if one)."""
        if policy_id is None:
            if len(self.spaces) != 1:
                raise ConfigError(
                    f"compute_single_action() needs policy_id= with several policies: "
                    f"{', '.join(map(repr, self.spaces))}"
                )
            policy_id = next(iter(self.spaces))
        if policy_id not in self.spaces:
            raise ConfigError(
                f"unknown policy_id {policy_id!r}; policies: {', '.join(map(repr, self.spaces))}"
            )
        explore = self.config.explore if explore is None else explore
        batch = np.asarray(observation)[None]
        actions = self._exploration[policy_id].get_actions(
            self.module[policy_id], batch, self._rng, self._timestep, explore
        )
        return np.asarray(actions)[0]

    def __repr__(self) -> str:
        return f"<MultiAgentEnvRunner {self.source} {env_name(self.config.env)} x{self.num_envs}>"


def env_runner_class(config: AlgorithmConfig[Any]) -> type[EnvRunner]:
    """Return the EnvRunner class for ``config``: multi-agent or single-agent."""
    return MultiAgentEnvRunner if is_multi_agent(config) else EnvRunner
