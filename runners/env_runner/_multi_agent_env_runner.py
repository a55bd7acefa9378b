"""The multi-agent EnvRunner: steps MultiAgentEnvs, one module per policy, the same hooks."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import NDArray

from hookbus.events import EpisodeStep
from hookbus.kernel import ConfigError

from .._exploration import make_exploration
from ..config import is_multi_agent, mapping_fn, module_spaces, policy_specs, set_multi_agent
from ..envs import (
    EnvContext,
    MultiAgentEnv,
    MultiAgentEnvToModule,
    env_maker,
    env_name,
    mark_env_failure,
    multi_agent_pipeline,
    remake_failed,
    vectorize_mode,
)
from ..episodes import (
    ALL_AGENTS,
    Episode,
    EpisodePublisher,
    MultiAgentEpisode,
    reset_agents,
    step_agents,
)
from ._env_runner import INPUT_ENV_SINGLE_SPACES, INPUT_ENV_SPACES, EnvRunner
from ._sampling import Sampling

if TYPE_CHECKING:
    from ..config import AlgorithmConfig

__all__ = ("MultiAgentEnvRunner", "MultiAgentSteps", "MultiAgentVectorEnv", "env_runner_class")


# EpisodeStep's own default reward (the object): a multi-agent step leaves the single-agent
# fields at their defaults, and msgspec leaves a float out of the encoding (omit_defaults)
# only when it is the default object itself, so recordings stay as compact as before.
_NO_REWARD: float = EpisodeStep(source="", seq=0).reward


class MultiAgentVectorEnv:
    """Hold ``num_envs`` MultiAgentEnvs, stepped one by one (``envs[i].unwrapped`` is one).

    Exceptions of a sub-env's ``step()`` and ``reset()`` are marked as the env's
    (``is_env_failure``), as the single-agent vector env's are. With ``restart``
    (``restart_failed_sub_environments``) a sub-env that raises is made anew in place, as
    a single-agent one is: a ``step()`` that raised ends its episode truncated, each agent
    that acted keeping its last observation with reward 0 and ``info["env_step_failure"]``
    naming the error; a ``reset()`` that raised is tried again on a new sub-env. More than
    ``tolerance`` failures of one sub-env in a row (no step succeeding in between) raise
    the last one: the env is broken, not flaky, and its runner fails as a whole.
    """

    def __init__(
        self, makers: list[Callable[[], Any]], *, restart: bool = False, tolerance: int = 100
    ) -> None:
        self._makers = makers
        self._restart, self._tolerance = restart, tolerance
        self._failures_in_a_row = [0] * len(makers)
        self.envs: list[MultiAgentEnv] = [_made(make) for make in makers]
        self.num_envs = len(self.envs)

    @property
    def unwrapped(self) -> MultiAgentVectorEnv:
        """This vector env (RLlib's callbacks receive ``env.unwrapped``)."""
        return self

    def render(self) -> Any:
        """Render sub-env 0: RLlib's multi-agent runner has one env, which its callbacks
        render with ``env.render()``."""
        return self.envs[0].render()

    def reset(self, i: int, seed: int | None = None) -> tuple[dict[Any, Any], dict[Any, Any]]:
        """Reset sub-env ``i``; return its observations and infos by agent id."""
        while True:  # until a reset works or _recreate gives up (raises)
            try:
                observations, infos = self.envs[i].reset(seed=seed)
            except Exception as exc:
                mark_env_failure(exc, "reset()")
                self._recreate(i, exc, "reset()")
                continue
            return observations, infos

    def step(self, i: int, actions: dict[Any, Any]) -> tuple[dict[Any, Any], ...]:
        """Step sub-env ``i`` with ``actions`` by agent id; return its five dicts."""
        try:
            result: tuple[dict[Any, Any], ...] = self.envs[i].step(actions)
        except Exception as exc:
            mark_env_failure(exc, "step()")
            self._recreate(i, exc, "step()")
            # No observation and "__all__" truncated: each agent that acted closes its
            # step with its last observation (MultiAgentEpisode), the failure in its info.
            failure = {agent_id: {"env_step_failure": repr(exc)} for agent_id in actions}
            return {}, {}, {ALL_AGENTS: False}, {ALL_AGENTS: True}, failure
        self._failures_in_a_row[i] = 0
        return result

    def _recreate(self, i: int, exc: Exception, call: str) -> None:
        """Make sub-env ``i`` anew after ``exc`` (raise it unless restarts are on and
        within the tolerance)."""
        if not self._restart:
            raise exc
        self._failures_in_a_row[i] += 1
        failures, tolerance = self._failures_in_a_row[i], self._tolerance
        make = functools.partial(_made, self._makers[i])
        self.envs[i] = remake_failed(self.envs[i], make, exc, call, failures, tolerance)

    def close(self) -> None:
        """Close every sub-env."""
        for env in self.envs:
            env.close()


def _made(make: Callable[[], Any]) -> MultiAgentEnv:
    """Return ``make()``'s env, refused with a ConfigError unless a MultiAgentEnv."""
    env = make()
    if not isinstance(env.unwrapped, MultiAgentEnv):
        env.close()
        raise ConfigError(
            f"config.multi_agent() needs a MultiAgentEnv, but the env made a "
            f"{type(env.unwrapped).__name__}; wrap a single-agent env with "
            f"make_multi_agent() (docs/multi_agent.md)"
        )
    made: MultiAgentEnv = env  # the env or a wrapper of it, as the list holds them
    return made


class MultiAgentSteps:
    """Step a ``MultiAgentVectorEnv`` for the sampling loop: sub-env by sub-env.

    Each vector step gives an action to each agent that got an observation
    (``episode.get_agents_to_act()``): one forward pass per module over the agents it acts
    for, across sub-envs. Sub-envs step one by one as they are recorded, and a finished
    episode's sub-env is reset at once (``on_episode_created`` before the reset,
    ``on_episode_start`` after it), so no step is ever only a reset (``resetting`` stays
    False).
    """

    __slots__ = ("_mapping", "env", "exploration", "resetting", "spaces", "to_module")

    def __init__(
        self, config: AlgorithmConfig[Any], env_context: EnvContext, *, seed: int | None
    ) -> None:
        if vectorize_mode(config.gym_env_vectorize_mode) != "SYNC":
            raise ConfigError(
                f"gym_env_vectorize_mode={config.gym_env_vectorize_mode!r} is not supported "
                f"with multi-agent envs yet: their sub-envs step in the runner's process "
                f"(leave it 'SYNC')"
            )
        makers = [
            env_maker(config.env, env_context.with_vector_index(i))
            for i in range(config.num_envs_per_env_runner)
        ]
        self._mapping = mapping_fn(config)
        self.env = MultiAgentVectorEnv(
            makers,
            restart=config.restart_failed_sub_environments,
            tolerance=config.num_consecutive_env_runner_failures_tolerance,
        )
        first: Any = self.env.envs[0].unwrapped
        self.to_module: MultiAgentEnvToModule | None
        """The env-to-module pipeline; None (Box agents, no connector) costs nothing."""
        self.to_module, self.spaces = multi_agent_pipeline(
            config.env_to_module_connector, first, module_spaces(config, first), self._mapping
        )
        """Each module's (observation space, action space): what the module takes."""
        self.exploration: dict[str, Any] = {
            module_id: make_exploration(config.exploration, action_space)
            for module_id, (_, action_space) in self.spaces.items()
        }
        self.resetting: list[bool] = []  # always False: sub-envs reset as episodes end

    async def reset(self, hooks: EpisodePublisher, count: int, seed: int | None) -> list[Any]:
        """Start an episode in each of the first ``count`` sub-envs, one after the other."""
        self.resetting = [False] * self.env.num_envs
        episodes: list[Any] = [None] * self.env.num_envs
        for i in range(count):
            episodes[i] = await self._start(i, hooks, None if seed is None else seed + i)
        return episodes

    async def _start(
        self, i: int, hooks: EpisodePublisher, seed: int | None = None
    ) -> MultiAgentEpisode:
        """Create an episode (publishing on_episode_created), reset sub-env ``i``, start it."""
        episode = MultiAgentEpisode(env_index=i, agent_to_module_mapping_fn=self._mapping)
        await hooks.acreated(episode)
        observations, infos = self.env.reset(i, seed)
        episode.add_env_reset(observations, infos)
        await hooks.astarted(episode, lambda: reset_agents(episode, observations, infos))
        return episode

    def _act(self, sampling: Sampling) -> list[dict[Any, Any]]:
        """Return each sub-env's action dict: one forward pass per module over its agents."""
        actions: list[dict[Any, Any]] = [{} for _ in range(self.env.num_envs)]
        batches: dict[str, tuple[list[Any], list[tuple[int, Any]]]] = {}
        for i, episode in enumerate(sampling.episodes):
            if episode is None:
                continue
            for agent_id in episode.get_agents_to_act():
                rows, keys = batches.setdefault(episode.module_for(agent_id), ([], []))
                rows.append(episode.agent_episodes[agent_id].observations[-1])
                keys.append((i, agent_id))
        module, to_module = sampling.module, self.to_module
        for module_id, (rows, keys) in batches.items():
            if sampling.random_actions or module is None:
                space = self.spaces[module_id][1]
                chosen: Any = [space.sample() for _ in keys]
            else:
                # Box agents without connector: no pipeline, the env's arrays as they are.
                batch = (
                    np.asarray(rows)
                    if to_module is None
                    else _rows(to_module, keys, rows, sampling)
                )
                chosen = self.exploration[module_id].get_actions(
                    module[module_id],
                    batch,
                    sampling.rng,
                    sampling.timestep,
                    sampling.explore,
                )
                chosen = chosen.tolist() if np.ndim(chosen) == 1 else list(chosen)
            for (i, agent_id), action in zip(keys, chosen, strict=True):
                actions[i][agent_id] = action
        return actions

    async def run(self, sampling: Sampling) -> int:
        """Step the sub-envs one by one until the budget is met; return the env steps."""
        env, episodes, done = self.env, sampling.episodes, sampling.done
        on_step, exact, publish_step = sampling.on_step, sampling.exact, sampling.hooks.step
        steps, timestep_before = 0, sampling.timestep
        while steps < sampling.max_steps and len(done) < sampling.max_episodes:
            actions = self._act(sampling)
            for i in range(env.num_envs):
                episode = episodes[i]
                if episode is None:  # an idle sub-env (exact sampling)
                    continue
                # Whether the step would end the episode is known only after it: exact
                # sampling stops at the budget before stepping.
                if exact and sampling.drops(i, steps, True):
                    continue
                obs, rewards, terminateds, truncateds, infos = env.step(i, actions[i])
                episode.add_env_step(obs, actions[i], rewards, terminateds, truncateds, infos)
                steps += 1
                ended, early = episode.is_done, False
                if on_step.call is not None:
                    agents = step_agents(
                        episode, obs, actions[i], rewards, terminateds, truncateds, infos
                    )
                    # The single-agent fields keep their defaults.
                    control = publish_step(episode, None, _NO_REWARD, None, {}, agents)
                    if on_step.is_async:
                        control = await control
                    if control is not None:
                        early = sampling.ends_early(episode, control, ended)
                if ended or early:
                    await sampling.end(i, episode, early)
            sampling.timestep = timestep_before + steps
        return steps

    def change_modules(
        self, config: AlgorithmConfig[Any], added: Sequence[str], removed: Sequence[str]
    ) -> None:
        """Act with the modules ``config`` now has: ``added`` take their PolicySpec's
        spaces (as the module takes them), ``removed`` are forgotten; new episodes map
        their agents with ``config``'s mapping (running ones keep theirs)."""
        policies = policy_specs(config)
        for module_id in removed:
            self.spaces.pop(module_id, None)
            self.exploration.pop(module_id, None)
        for module_id in added:
            spec = policies[module_id]
            self.spaces[module_id] = (spec.observation_space, spec.action_space)
            self.exploration[module_id] = make_exploration(config.exploration, spec.action_space)
        self._mapping = mapping_fn(config)

    def end_early(self, i: int) -> None:
        """Nothing to do: ``restart()`` resets the sub-env at once."""

    async def restart(self, i: int, hooks: EpisodePublisher) -> MultiAgentEpisode:
        """Create, reset and start sub-env ``i``'s next episode."""
        return await self._start(i, hooks)


def _rows(
    to_module: MultiAgentEnvToModule,
    keys: list[tuple[int, Any]],
    observations: list[Any],
    sampling: Sampling,
) -> Any:
    """Return the module's rows for the env's ``observations`` of the agents ``keys``
    (sub-env, agent id), through the env-to-module pipeline."""
    episodes = sampling.episodes
    return to_module.rows([(a, episodes[i].agent_episodes[a]) for i, a in keys], observations)


class MultiAgentEnvRunner(EnvRunner):
    """Sample ``MultiAgentEpisode``s, publishing the same hooks as the single-agent runner.

    The EnvRunner with another strategy (``MultiAgentSteps``) and the per-policy API:
    ``on_episode_step`` fires after every env step, ``len(episode)`` counts env steps, and
    a finished episode's sub-env is reset at once. ``module`` is a mapping of module id to
    module (``module[module_id].forward_exploration(obs, rng)``).
    """

    is_multi_agent = True
    steps_class = MultiAgentSteps

    @property
    def spaces(self) -> dict[str, tuple[Any, Any]]:
        """Each module's (observation space, action space)."""
        return cast(MultiAgentSteps, self._steps).spaces

    def get_spaces(self) -> dict[str, tuple[Any, Any]]:
        """Return the spaces, RLlib's dict: each module's (observation space, action space)
        (``spaces``), and the env's own under ``"__env__"`` and ``"__env_single__"``.

        The env's are sub-env 0's ``observation_space`` and ``action_space`` (None where it
        sets none) under both keys: hookbus steps its multi-agent sub-envs one by one and
        batches no space across them.
        """
        first = self.env.envs[0]
        env_spaces = (
            getattr(first, "observation_space", None),
            getattr(first, "action_space", None),
        )
        return {INPUT_ENV_SPACES: env_spaces, INPUT_ENV_SINGLE_SPACES: env_spaces, **self.spaces}

    def module_observations(
        self, observations: Sequence[Any], episode: Episode | None = None
    ) -> NDArray[Any]:
        """Return an agent's ``observations`` (``episode``'s, an agent episode) as its
        module takes them: through the env-to-module pipeline, stacked into one array."""
        to_module = cast(MultiAgentSteps, self._steps).to_module
        if to_module is None:
            return np.asarray(observations)
        if episode is None:
            raise ValueError(
                "module_observations() of a multi-agent runner with an env-to-module "
                "pipeline needs the agent's episode: its agent_id picks the pipeline"
            )
        return to_module.stack(episode.agent_id, observations, episode)

    def episode_observations(self, episode: Episode) -> NDArray[Any]:
        """Return an agent's ``episode``'s observations as its module takes them, stacked
        (``module_observations`` of its observations)."""
        return self.module_observations(episode.observations, episode)

    def change_modules(
        self, settings: dict[str, Any], *, add: dict[str, Any], remove: list[str]
    ) -> None:
        """Take the modules ``Algorithm.add_module`` / ``remove_module`` changed.

        ``settings`` are the config's new multi-agent settings (and ``rl_module_spec``),
        set on this runner's config (an in-process runner shares the Algorithm's: setting
        them again changes nothing); ``add`` (module id to module) joins the runner's
        module unless it has it (in-process runners share the learner's); ``remove``
        leaves it. After a removal the ongoing episodes are dropped (RLlib's), so that no
        agent is left with a module that is gone.
        """
        set_multi_agent(self.config, settings)
        module = self.module
        for module_id, new in add.items():
            if module_id not in module:
                module.add_module(module_id, new)
        for module_id in remove:
            module.remove_module(module_id, raise_err_if_not_found=False)
        steps = cast(MultiAgentSteps, self._steps)
        joined = [m for m in policy_specs(self.config) if m not in steps.spaces]
        steps.change_modules(self.config, joined, remove)
        if remove:
            self._drop_ongoing()

    def compute_single_action(
        self, observation: Any, *, explore: bool | None = None, policy_id: str | None = None
    ) -> Any:
        """Return ``policy_id``'s action for one observation of the env (the only policy
        if one), through the env-to-module pipeline as the policy's first agent's."""
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
        to_module = cast(MultiAgentSteps, self._steps).to_module
        if to_module is not None:
            observation = to_module.module_one(policy_id, observation)
        batch = np.asarray(observation)[None]
        actions = self._steps.exploration[policy_id].get_actions(
            self.module[policy_id], batch, self._rng, self._sampling.timestep, explore
        )
        return np.asarray(actions)[0]

    def __repr__(self) -> str:
        return f"<MultiAgentEnvRunner {self.source} {env_name(self.config.env)} x{self.num_envs}>"


def env_runner_class(config: AlgorithmConfig[Any]) -> type[EnvRunner]:
    """Return the EnvRunner class for ``config``: multi-agent or single-agent."""
    return MultiAgentEnvRunner if is_multi_agent(config) else EnvRunner
