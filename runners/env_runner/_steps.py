"""The sampling loop: what single- and multi-agent runners share, and what they do their way.

An EnvRunner samples through its ``Steps`` strategy (``VectorEnvSteps`` here for gymnasium
vector envs, ``MultiAgentSteps`` beside ``MultiAgentEnvRunner``): its ``run()`` is the loop
over vector steps and sub-envs, written out per kind of env because it is the hot path.
Everything a recorded step may lead to is ``Sampling``'s, the same for both: the budget
(exact sampling's drops), the one place that builds and publishes ``on_episode_step``
(``publish_step``), a handler's ``Control``, and an episode's end (``end``: the episode's
hooks through ``EpisodeLifecycle``, then the sub-env's next episode).

Why the loops are not one: a shared loop body costs a Python call per sub-env step (the
strategy's "record this transition"), and a shared loop over vector steps an awaited
coroutine per vector step; measured on ``bench/sampling.py``'s rows (CPU time, alternated
with the hand-written loop), 1-3% and 2% of sampling. Two short loops that call one
publish point and one episode end cost nothing measurable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from hookbus.events import AgentData, EpisodeStep
from hookbus.kernel import Control, Dispatcher, Episode, Publisher

from .._exploration import make_exploration
from ..envs import AT_NEXT_STEP, WHEN_DONE, EnvContext, env_to_module_pipeline, make_vector_env
from ._lifecycle import EpisodeLifecycle
from ._requests import SampleRequest

if TYPE_CHECKING:
    from ..config import AlgorithmConfig

__all__ = ("Sampling", "Steps", "StepsFactory", "VectorEnvSteps", "sub_info")


class Steps(Protocol):
    """Step an EnvRunner's env: its sampling loop (``run``) and how episodes begin.

    Built by a ``StepsFactory``.
    """

    env: Any
    """The vector env (``env.envs[i].unwrapped`` is sub-env ``i``)."""
    exploration: Any
    """How the module's outputs become actions (per module id, multi-agent)."""
    resetting: list[bool]
    """Per sub-env: whether its next step only resets it (its new episode starts then)."""

    async def reset(self, lifecycle: EpisodeLifecycle, count: int, seed: int | None) -> list[Any]:
        """Reset the env; return a started episode for each of the first ``count`` sub-envs
        (the others None: idle)."""
        ...

    async def run(self, sampling: Sampling) -> int:
        """Step the env until ``sampling``'s budget is met, recording every sub-env's
        transition into its episode and handing what follows to ``sampling``; return the
        number of transitions recorded."""
        ...

    def end_early(self, i: int) -> None:
        """Make sub-env ``i`` start anew: a handler ended its episode (``end_episode``)."""
        ...

    async def restart(self, i: int, lifecycle: EpisodeLifecycle) -> Any:
        """Return sub-env ``i``'s next episode (its last one ended), created and, if the
        env resets at once, started."""
        ...


class StepsFactory(Protocol):
    """Build a runner's ``Steps`` (and its env): what ``EnvRunner.steps_class`` names."""

    def __call__(
        self, config: AlgorithmConfig[Any], env_context: EnvContext, *, seed: int | None
    ) -> Steps: ...


class Sampling:
    """What a recorded step may lead to, the same for every ``Steps``; one per runner.

    ``begin()`` starts a ``sample()`` call from its request: ``episodes`` are the runner's
    (None: an idle sub-env), ``done`` collects the finished ones. With ``dropped`` (exact
    sampling) the budget is met exactly: no episode starts beyond ``max_episodes``, and the
    episodes the budget cuts short go to ``dropped``. ``rng`` and ``timestep`` (env steps
    sampled in all, kept per vector step) are the runner's, for its exploration.
    """

    __slots__ = (
        "_next_seq",
        "_publisher",
        "_runner",
        "_steps",
        "done",
        "dropped",
        "episodes",
        "exact",
        "explore",
        "lifecycle",
        "max_episodes",
        "max_steps",
        "on_step",
        "random_actions",
        "rng",
        "source",
        "started",
        "timestep",
    )

    def __init__(
        self,
        runner: Any,
        stepper: Steps,
        lifecycle: EpisodeLifecycle,
        publisher: Publisher,
        rng: np.random.Generator,
    ) -> None:
        self._runner, self._steps, self._publisher = runner, stepper, publisher
        self.lifecycle, self.rng, self.timestep = lifecycle, rng, 0
        self.on_step: Dispatcher = publisher.dispatcher(EpisodeStep)
        """The step hook's dispatcher: ``call`` None means nobody listens (build nothing)."""
        self._next_seq, self.source = publisher.next_seq, publisher.source
        self.begin([], SampleRequest(), [], None)

    def begin(
        self,
        episodes: list[Any],
        request: SampleRequest,
        done: list[Any],
        dropped: list[Any] | None,
    ) -> None:
        """Start a ``sample()`` call as ``request`` asks (without a budget: the config's
        ``rollout_fragment_length`` per sub-env; ``explore`` None: the config's)."""
        config = self._runner.config
        self.episodes, self.done, self.dropped, self.exact = episodes, done, dropped, request.exact
        self.random_actions = request.random_actions
        self.explore: bool = config.explore if request.explore is None else request.explore
        num_timesteps, num_episodes = request.num_timesteps, request.num_episodes
        if num_timesteps is None and num_episodes is None:
            num_timesteps = config.rollout_fragment_length * self._runner.num_envs
        self.max_steps = num_timesteps if num_timesteps is not None else float("inf")
        self.max_episodes = num_episodes if num_episodes is not None else float("inf")
        self.started = sum(episode is not None for episode in episodes)

    def finish(self) -> None:
        """End the call: let go of its episodes (the runner keeps the ongoing ones)."""
        self.episodes, self.done, self.dropped = [], [], None

    @property
    def module(self) -> Any:
        """The module the runner acts with now (the learner may set it at any time)."""
        return self._runner.module

    def drops(self, i: int, steps: int, ends: bool) -> bool:
        """Exact sampling: drop sub-env ``i``'s episode (and return True) if the budget was
        met earlier in this vector step; ``ends``: whether its step would end it (True
        when that is known only after the step)."""
        if steps < self.max_steps and not (ends and len(self.done) >= self.max_episodes):
            return False
        self.dropped.append(self.episodes[i])  # type: ignore[union-attr]
        self.episodes[i] = None
        return True

    def publish_step(
        self,
        episode: Any,
        action: Any,
        reward: float,
        observation: Any,
        info: dict[str, Any],
        agents: list[AgentData] | None,
    ) -> Any:
        """Build the ``on_episode_step`` event of ``episode``'s last step and run the chain
        (someone listens): the one place the hook is published, the final step included.

        Returns the chain's result: its Control (or None), or for an async chain the
        coroutine to await. A call, not an ``await`` of a helper: that costs ~340 ns a
        step more (docs/design.md). The live arguments go positionally, in
        ``kernel.LIVE_ARGS`` order (``tests/runners/test_live_arguments.py``).
        """
        runner, i = self._runner, episode.env_index
        event = EpisodeStep(
            source=self.source,
            seq=self._next_seq(),
            episode_id=episode.id_,
            env_index=i,
            action=action,
            reward=reward,
            observation=observation,
            info=info,
            agents=agents,
            terminated=episode.is_terminated,
            truncated=episode.is_truncated,
        )
        return self.on_step.call(  # type: ignore[misc]
            event, episode, runner, runner.metrics, runner.env, runner.module, i
        )

    def ends_early(self, episode: Any, control: Control, ended: bool) -> bool:
        """Keep an ``on_episode_step`` chain's Control; with ``end_episode`` on a step that
        did not end ``episode``, truncate it now (and return True)."""
        self._publisher.add_control(control)
        if ended or not control.end_episode:
            return False
        episode.truncate()  # a multi-agent episode's agents all leave truncated
        return True

    async def end(self, i: int, episode: Any, early: bool) -> None:
        """Finish sub-env ``i``'s ``episode`` (its last step is published): publish its end,
        then give the sub-env its next episode, unless the budget is met (exact)."""
        if early:
            self._steps.end_early(i)
        await self.lifecycle.ended(episode, early)
        self.done.append(episode)
        if self.exact and self.started >= self.max_episodes:
            self.episodes[i] = None
        else:
            self.episodes[i] = await self._steps.restart(i, self.lifecycle)
            self.started += 1


class VectorEnvSteps:
    """Step a gymnasium vector env: one ``env.step()`` for every sub-env per vector step.

    A finished sub-env resets on its next step (gymnasium's NEXT_STEP autoreset, in every
    vectorize mode): its new episode is created when the last one ends and starts with
    that reset step, which is never recorded as a transition. An episode a handler ended
    early begins its successor as the mode allows (``end_early``).
    """

    __slots__ = (
        "_fresh",
        "draining",
        "env",
        "exploration",
        "obs",
        "resetting",
        "rows_of",
        "to_module",
    )

    def __init__(
        self, config: AlgorithmConfig[Any], env_context: EnvContext, *, seed: int | None
    ) -> None:
        self.env: Any = make_vector_env(
            config.env,
            config.num_envs_per_env_runner,
            env_context,
            mode=config.gym_env_vectorize_mode,
            restart_failed_sub_environments=config.restart_failed_sub_environments,
            sub_env_failures_tolerance=config.num_consecutive_env_runner_failures_tolerance,
        )
        if seed is not None:
            self.env.action_space.seed(seed)  # its random actions too
        self.exploration: Any = make_exploration(config.exploration, self.env.single_action_space)
        self.resetting: list[bool] = []
        self.draining: list[bool] = []
        """Per sub-env (resetting too): whether it plays an episode a handler ended out
        unrecorded, its next episode starting after its end (``WHEN_DONE``)."""
        self._fresh: dict[int, tuple[Any, dict[str, Any]]] = {}
        """Sub-envs reset alone this vector step: their first observation and info."""
        self.to_module = env_to_module_pipeline(config.env_to_module_connector, self.env)
        """The env-to-module pipeline; None (a Box env, no connector) costs nothing."""
        self.rows_of: Any = list if self.to_module is None else self.to_module.rows_of
        """How a vector step's batched observations become one per sub-env."""
        self.obs: Any = None
        """The last observations as the module takes them: what it acts on next."""

    async def reset(self, lifecycle: EpisodeLifecycle, count: int, seed: int | None) -> list[Any]:
        """Create the episodes (before the reset, as RLlib), reset every sub-env, start them."""
        started = [await lifecycle.created(Episode(env_index=i)) for i in range(count)]
        self.resetting = [False] * self.env.num_envs
        self.draining = [False] * self.env.num_envs
        self._fresh.clear()
        obs, infos = self.env.reset(seed=seed)
        rows = self.rows_of(obs)
        for i, episode in enumerate(started):
            episode.add_reset(rows[i], sub_info(infos, i) if infos else {})
            await lifecycle.started(episode)
        episodes = started + [None] * (self.env.num_envs - count)
        self.obs = obs if self.to_module is None else self.to_module(obs, episodes)
        return episodes

    def _act(self, sampling: Sampling) -> Any:
        """Return every sub-env's action (idle sub-envs too: they step with the others)."""
        module = sampling.module
        if sampling.random_actions or module is None:
            return np.asarray(self.env.action_space.sample())
        return self.exploration.get_actions(
            module, self.obs, sampling.rng, sampling.timestep, sampling.explore
        )

    async def run(self, sampling: Sampling) -> int:
        """Step the vector env until the budget is met; return the transitions recorded."""
        # The hot loop: one vector step, then a pass over the sub-envs in plain Python. Arrays
        # become lists once per vector step (tolist() is one C call; indexing numpy per
        # element is not). Events are built only for hooks with subscribers. Exact sampling
        # costs training one cheap test per sub-env step.
        env, episodes, resetting, done = self.env, sampling.episodes, self.resetting, sampling.done
        on_step, exact, rows_of, to_module = (
            sampling.on_step,
            sampling.exact,
            self.rows_of,
            self.to_module,
        )
        steps, timestep_before = 0, sampling.timestep
        while steps < sampling.max_steps and len(done) < sampling.max_episodes:
            actions = self._act(sampling)
            obs, rewards, terminateds, truncateds, infos = env.step(actions)
            action_list = actions.tolist() if actions.ndim == 1 else list(actions)
            reward_list = rewards.tolist()
            term_list = terminateds.tolist()
            trunc_list = truncateds.tolist()
            rows = rows_of(obs)
            for i in range(len(rows)):
                episode = episodes[i]
                if episode is None:  # an idle sub-env (exact sampling)
                    continue
                info = sub_info(infos, i) if infos else {}
                if resetting[i]:  # this step was the sub-env's reset: the episode starts
                    if self.draining[i]:  # not yet: it plays an episode a handler ended out
                        self.draining[i] = not (term_list[i] or trunc_list[i])
                        continue
                    resetting[i] = False
                    episode.add_reset(rows[i], info)
                    await sampling.lifecycle.started(episode)
                    continue
                terminated, truncated = term_list[i], trunc_list[i]
                if exact and sampling.drops(i, steps, terminated or truncated):
                    continue
                action, reward = action_list[i], reward_list[i]
                episode.add_step(rows[i], action, reward, terminated, truncated, info)
                steps += 1
                early = False
                if on_step.call is not None:
                    control = sampling.publish_step(episode, action, reward, rows[i], info, None)
                    if on_step.is_async:
                        control = await control
                    if control is not None:
                        early = sampling.ends_early(episode, control, terminated or truncated)
                if terminated or truncated or early:
                    await sampling.end(i, episode, early)
            if self._fresh:  # sub-envs reset alone (ASYNC): act on their new observations
                obs = self._with_fresh_rows(obs)
            # A Box env without connector hands the module the env's arrays as they are.
            self.obs = obs if to_module is None else to_module(obs, episodes)
            sampling.timestep = timestep_before + steps
        return steps

    def end_early(self, i: int) -> None:
        """Begin sub-env ``i``'s next episode as its vectorize mode allows: SYNC resets it
        at its next step, as after a natural end; ASYNC resets it alone, now; a
        VECTOR_ENTRY_POINT env plays the episode out unrecorded first (``WHEN_DONE``)."""
        how = self.env.end_sub_episode(i)
        if how == WHEN_DONE:
            self.draining[i] = True
        elif how != AT_NEXT_STEP:
            obs, infos = how
            self._fresh[i] = (self.rows_of(obs)[i], sub_info(infos, i) if infos else {})

    async def restart(self, i: int, lifecycle: EpisodeLifecycle) -> Any:
        """Create sub-env ``i``'s next episode; it starts with the sub-env's next step, or
        at once if the sub-env was just reset alone (``end_early``)."""
        episode = await lifecycle.created(Episode(env_index=i))
        fresh = self._fresh.get(i)
        if fresh is None:
            self.resetting[i] = True
        else:
            episode.add_reset(*fresh)
            await lifecycle.started(episode)
        return episode

    def _with_fresh_rows(self, obs: Any) -> Any:
        """Return ``obs`` with the rows of the sub-envs reset alone replaced (a copy: the
        episodes keep views of the old rows)."""
        rows = {i: row for i, (row, _) in self._fresh.items()}
        self._fresh.clear()
        return with_rows(obs, rows)


def with_rows(batch: Any, rows: dict[int, Any]) -> Any:
    """Return a copy of a batched observation (an array, or a dict or tuple of them, as a
    Dict or Tuple space batches) with row ``i`` replaced by ``rows[i]``."""
    if isinstance(batch, dict):
        return {k: with_rows(v, {i: row[k] for i, row in rows.items()}) for k, v in batch.items()}
    if isinstance(batch, tuple):
        return tuple(
            with_rows(v, {i: row[j] for i, row in rows.items()}) for j, v in enumerate(batch)
        )
    batch = np.array(batch, copy=True)
    for i, row in rows.items():
        batch[i] = row
    return batch


def sub_info(infos: dict[str, Any], i: int) -> dict[str, Any]:
    """Pick sub-env ``i``'s info out of a vector env's batched info dict."""
    info = {}
    for key, values in infos.items():
        if key.startswith("_"):
            continue
        mask = infos.get("_" + key)
        if mask is not None and not mask[i]:
            continue
        info[key] = sub_info(values, i) if isinstance(values, dict) else values[i]
    return info
