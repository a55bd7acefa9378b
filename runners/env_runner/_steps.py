"""The gymnasium vector env's sampling loops: ``VectorEnvSteps``.

An EnvRunner samples through its ``Steps`` strategy (``_sampling.Steps``: ``VectorEnvSteps``
here for gymnasium vector envs, ``MultiAgentSteps`` beside ``MultiAgentEnvRunner``): its
``run()`` is the loop over vector steps and sub-envs, written out per kind of env because
it is the hot path. Everything a recorded step may lead to is ``_sampling.Sampling``'s,
the same for every loop. A gymnasium vector env has two loops, picked per ``sample()``
call: the per-step loop here when someone listens to ``on_episode_step`` (each sub-env's
transition goes into its episode, and the hook is published, as it comes), and the
columnar loop (``_columns``) when nobody does (Python per vector step, and per sub-env
only where an episode starts or ends).

Why the loops are not one with the multi-agent one: a shared loop body costs a Python
call per sub-env step (the strategy's "record this transition"), and a shared loop over
vector steps an awaited coroutine per vector step; measured on ``bench/sampling.py``'s rows
(CPU time, alternated with the hand-written loop), 1-3% and 2% of sampling. Two short
loops that call one publish point and one episode end cost nothing measurable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .._exploration import make_exploration
from .._types import Batched
from ..envs import AT_NEXT_STEP, WHEN_DONE, EnvContext, env_to_module_pipeline, make_vector_env
from ..episodes import Episode, EpisodePublisher
from ._batched import sub_info, with_rows
from ._columns import ColumnarLoop
from ._sampling import Sampling

if TYPE_CHECKING:
    from ..config import AlgorithmConfig

__all__ = ("VectorEnvSteps",)


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

    async def reset(self, hooks: EpisodePublisher, count: int, seed: int | None) -> list[Any]:
        """Create the episodes (before the reset, as RLlib), reset every sub-env, start them."""
        started = [await hooks.acreated(Episode(env_index=i)) for i in range(count)]
        self.resetting = [False] * self.env.num_envs
        self.draining = [False] * self.env.num_envs
        self._fresh.clear()
        obs, infos = self.env.reset(seed=seed)
        rows = self.rows_of(obs)
        for i, episode in enumerate(started):
            episode.add_reset(rows[i], sub_info(infos, i) if infos else {})
            await hooks.astarted(episode)
        episodes = started + [None] * (self.env.num_envs - count)
        self.obs = obs if self.to_module is None else self.to_module(obs, episodes)
        return episodes

    def act(self, sampling: Sampling) -> Any:
        """Return every sub-env's action (idle sub-envs too: they step with the others)."""
        module = sampling.module
        if sampling.random_actions or module is None:
            return np.asarray(self.env.action_space.sample())
        return self.exploration.get_actions(
            module, self.obs, sampling.rng, sampling.timestep, sampling.explore
        )

    async def run(self, sampling: Sampling) -> int:
        """Step the vector env until the budget is met; return the transitions recorded.

        With nobody listening per step (and a Box env without connector: the module acts
        on the env's arrays as they are), the columnar loop steps (``_columns``); the
        per-step loop goes on from where it stopped if someone subscribes meanwhile.
        """
        steps = 0
        if sampling.on_step.call is None and self.to_module is None:
            steps = await ColumnarLoop(self, sampling).run(steps)
        return await self._run_per_step(sampling, steps)

    async def _run_per_step(self, sampling: Sampling, steps: int) -> int:
        """Step, recording every sub-env's transition into its episode as it comes, until
        the budget is met (``steps`` recorded so far in this call); return them in all."""
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
        hooks = sampling.hooks
        publish_step, on_started = hooks.step, hooks.on_started
        timestep_before = sampling.timestep - steps
        while steps < sampling.max_steps and len(done) < sampling.max_episodes:
            actions = self.act(sampling)
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
                    if on_started.call is not None:
                        await hooks.astarted(episode)
                    continue
                terminated, truncated = term_list[i], trunc_list[i]
                if exact and sampling.drops(i, steps, terminated or truncated):
                    continue
                action, reward = action_list[i], reward_list[i]
                episode.add_step(rows[i], action, reward, terminated, truncated, info)
                steps += 1
                early = False
                if on_step.call is not None:
                    control = publish_step(episode, action, reward, rows[i], info)
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

    async def restart(self, i: int, hooks: EpisodePublisher) -> Any:
        """Create sub-env ``i``'s next episode; it starts with the sub-env's next step, or
        at once if the sub-env was just reset alone (``end_early``)."""
        episode = Episode(env_index=i)
        if hooks.on_created.call is not None:
            await hooks.acreated(episode)
        fresh = self._fresh.get(i)
        if fresh is None:
            self.resetting[i] = True
        else:
            episode.add_reset(*fresh)
            await hooks.astarted(episode)
        return episode

    def _with_fresh_rows(self, obs: Batched) -> Batched:
        """Return ``obs`` with the rows of the sub-envs reset alone replaced (a copy: the
        episodes keep views of the old rows)."""
        rows = {i: row for i, (row, _) in self._fresh.items()}
        self._fresh.clear()
        return with_rows(obs, rows)
