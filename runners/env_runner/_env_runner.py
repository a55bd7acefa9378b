"""The EnvRunner: steps a gymnasium vector env, builds episodes, publishes the EnvRunner hooks."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from hookbus.events import (
    EpisodeStep,
    SampleEnd,
)
from hookbus.kernel import Bus, Control, Dispatcher, Episode, Publisher
from hookbus.metrics import MetricsLogger

from .._exploration import make_exploration
from ..envs import EnvContext, env_name, make_vector_env
from ._lifecycle import EpisodeLifecycle
from ._requests import SampleRequest, SampleSummary

if TYPE_CHECKING:
    from ..config import AlgorithmConfig

__all__ = ("EnvRunner",)


class EnvRunner(EpisodeLifecycle):
    """Sample episodes from ``num_envs_per_env_runner`` sub-envs, publishing every hook.

    ``config`` is the Algorithm's config (``config.in_evaluation`` tells an evaluation
    runner); ``module`` chooses actions (``forward_exploration(obs, rng)`` /
    ``forward_inference(obs)``). The runner keeps no state bound to an event loop, so
    ``anyio.run(functools.partial(runner.sample, num_timesteps=1000))`` works from sync code.
    """

    def __init__(
        self,
        config: AlgorithmConfig[Any],
        *,
        bus: Bus,
        module: Any = None,
        worker_index: int = 0,
    ) -> None:
        self.config = config
        self.bus = bus
        self.module = module
        self.worker_index = worker_index
        self.metrics = MetricsLogger()
        """This runner's metrics; callbacks get it as ``metrics_logger``."""
        prefix = "eval_env_runner" if config.in_evaluation else "env_runner"
        self.source = f"{prefix}:{worker_index}"
        self.env_context = EnvContext(
            dict(config.env_config),
            worker_index=worker_index,
            num_workers=config.num_env_runners,
            in_evaluation=config.in_evaluation,
            services=bus.services,
        )
        seed = config.seed
        if seed is not None and config.in_evaluation:
            seed += 500  # evaluation runner i must not replay training runner i's episodes
        self._reset_seed = None if seed is None else seed + 1000 * worker_index
        self._rng = np.random.default_rng(None if seed is None else [seed, worker_index])
        self.env = self._make_env(self._reset_seed)
        """The env: ``env.envs[i].unwrapped`` is sub-env ``i``."""
        self.num_envs: int = self.env.num_envs
        self._exploration = self._make_exploration()
        self._timestep = 0  # env steps this runner sampled, for exploration schedules
        self._announced = False  # on_environment_created published?
        # Per sub-env: the live episode, whether the env resets on the next step (gymnasium's
        # NEXT_STEP autoreset), and how many of the episode's steps were handed out already.
        self._episodes: list[Any] = []  # Episode, or None: an idle sub-env (exact sampling)
        self._resetting: list[bool] = []
        self._handed: dict[str, int] = {}
        self._obs: Any = None
        # The one path onto the bus; the module is passed per event (the learner sets it later).
        self._publisher = Publisher(
            bus, self.source, env_runner=self, metrics_logger=self.metrics, env=self.env
        )
        self._on_step: Dispatcher = self._publisher.dispatcher(EpisodeStep)  # the hot path

    def _make_env(self, seed: int | None) -> Any:
        """Make the gymnasium vector env (``seed`` also seeds its random actions)."""
        env = make_vector_env(
            self.config.env,
            self.config.num_envs_per_env_runner,
            self.env_context,
            restart_failed_sub_environments=self.config.restart_failed_sub_environments,
            sub_env_failures_tolerance=self.config.num_consecutive_env_runner_failures_tolerance,
        )
        if seed is not None:
            env.action_space.seed(seed)
        return env

    def _make_exploration(self) -> Any:
        return make_exploration(self.config.exploration, self.env.single_action_space)

    # --- sampling ---------------------------------------------------------------------------

    async def sample(
        self,
        num_timesteps: int | None = None,
        num_episodes: int | None = None,
        explore: bool | None = None,
        random_actions: bool = False,
        *,
        force_reset: bool = False,
        exact: bool = False,
    ) -> list[Episode]:
        """Step the envs until ``num_timesteps`` env steps or ``num_episodes`` episodes are done.

        With neither, samples the config's ``rollout_fragment_length`` per sub-env. Returns
        the episode chunks sampled in this call: finished episodes and the ongoing ones cut
        at the end (each a copy holding only the steps not returned before).

        ``explore`` None acts as the config's ``explore`` says; True or False overrides it
        for this call (RLlib's keyword). ``force_reset=True`` first resets every sub-env;
        the ongoing episodes are dropped (no ``on_episode_end`` for them), as RLlib's
        ``force_reset`` does. ``exact=True`` meets the budget exactly, where a vector env
        otherwise overshoots: no new episode starts once ``num_episodes`` are under way
        (the sub-envs left over step unrecorded), and the transitions beyond
        ``num_timesteps`` in the last vector step are dropped, their episodes with them.
        Sub-envs left like that are reset by the next call.
        """
        request = SampleRequest(
            num_timesteps=num_timesteps,
            num_episodes=num_episodes,
            explore=explore,
            random_actions=random_actions,
            force_reset=force_reset,
            exact=exact,
        )
        return await self.sample_request(request)

    async def sample_request(self, request: SampleRequest) -> list[Episode]:
        """Sample as ``request`` asks: what ``sample()`` does, and what backends call."""
        num_timesteps, num_episodes = request.num_timesteps, request.num_episodes
        if num_timesteps is None and num_episodes is None:
            num_timesteps = self.config.rollout_fragment_length * self.num_envs
        explore = self.config.explore if request.explore is None else request.explore
        if not self._announced:
            await self._announce()
        if request.force_reset:
            self._drop_ongoing()
        done: list[Episode] = []
        dropped: list[Episode] = []  # cut short by an exact budget: handed out, never resumed
        act = (explore, request.random_actions)
        if request.exact:
            if self._obs is None:
                # Only as many episodes as the budget: the other sub-envs step unrecorded.
                await self._reset_all(num_episodes)
            steps = await self._run(num_timesteps, num_episodes, *act, done, dropped)
        else:
            if self._obs is None:
                await self._reset_all()
            steps = await self._run(num_timesteps, num_episodes, *act, done)
        samples = self._cut(done, dropped)
        if request.exact and None in self._episodes:
            self._drop_ongoing()  # idle or cut sub-envs: the next call starts afresh
        if self._publisher.wants(SampleEnd):
            await self._publisher.publish(
                SampleEnd,
                {"samples": samples},
                num_env_steps=steps,
                episode_ids=[episode.id_ for episode in samples],
            )
        return samples

    async def sample_and_get_metrics(
        self, request: SampleRequest | None = None, /, **options: Any
    ) -> SampleSummary:
        """Sample as ``request`` (or ``sample()``'s keywords) asks, then reduce the metrics;
        return counts and metrics.

        What an evaluation round asks each runner for (RLlib's ``_env_runner_remote``): the
        episodes stay here, only their counts travel.
        """
        chunks = await self.sample_request(request or SampleRequest(**options))
        return SampleSummary(
            num_env_steps=sum(map(len, chunks)),
            num_episodes=sum(chunk.is_done for chunk in chunks),
            metrics=self.get_metrics(),
        )

    def _drop_ongoing(self) -> None:
        """Forget the ongoing episodes; the next ``sample()`` resets every sub-env."""
        self._obs = None
        self._episodes = []
        self._resetting = []
        self._handed.clear()

    async def _run(
        self,
        num_timesteps: int | None,
        num_episodes: int | None,
        explore: bool,
        random_actions: bool,
        done: list[Episode],
        dropped: list[Episode] | None = None,
    ) -> int:
        """Step until the budget is met; return the number of env steps (transitions).

        With ``dropped`` (exact sampling) the budget is met exactly: ``self._episodes[i] is
        None`` marks sub-env ``i`` idle (it steps with the others, as a vector env cannot
        hold one back, but nothing of it is recorded), no episode starts beyond
        ``num_episodes``, and episodes the budget cuts short go to ``dropped``.
        """
        # The hot loop: one vector step, then a pass over the sub-envs in plain Python. Arrays
        # become lists once per vector step (tolist() is one C call; indexing numpy per
        # element is not). Events are built only for hooks with subscribers. Exact sampling
        # costs training two cheap tests per sub-env step (measured: no visible change).
        env, episodes, resetting = self.env, self._episodes, self._resetting
        # The step hook's dispatcher, called inline (kernel.LIVE_ARGS order, positionally):
        # an `await publisher.publish()` per step would cost ~340 ns more (docs/design.md).
        on_step, next_seq = self._on_step, self._publisher.next_seq
        exact = dropped is not None
        max_steps = num_timesteps if num_timesteps is not None else float("inf")
        max_episodes = num_episodes if num_episodes is not None else float("inf")
        started = sum(episode is not None for episode in episodes)
        steps = 0
        timestep_before = self._timestep
        while steps < max_steps and len(done) < max_episodes:
            actions = self._actions(explore, random_actions)
            obs, rewards, terminateds, truncateds, infos = env.step(actions)
            action_list = actions.tolist() if actions.ndim == 1 else list(actions)
            reward_list = rewards.tolist()
            term_list = terminateds.tolist()
            trunc_list = truncateds.tolist()
            rows = list(obs)
            for i in range(self.num_envs):
                episode = episodes[i]
                if episode is None:  # an idle sub-env (exact sampling)
                    continue
                info = _sub_info(infos, i) if infos else {}
                if resetting[i]:  # this step was the sub-env's reset: the episode starts
                    resetting[i] = False
                    episode.add_reset(rows[i], info)
                    await self._episode_started(episode)
                    continue
                terminated, truncated = term_list[i], trunc_list[i]
                if exact and (
                    steps >= max_steps or ((terminated or truncated) and len(done) >= max_episodes)
                ):  # the budget was met earlier in this vector step: drop the episode
                    dropped.append(episode)  # type: ignore[union-attr]
                    episodes[i] = None
                    continue
                action, reward = action_list[i], reward_list[i]
                episode.add_step(rows[i], action, reward, terminated, truncated, info)
                steps += 1
                step: dict[str, Any] | None
                if terminated or truncated:
                    # This last step's on_episode_step, then on_episode_end (RLlib's order).
                    step = {
                        "action": action,
                        "reward": reward,
                        "observation": rows[i],
                        "info": info,
                    }
                else:
                    if on_step.call is None:
                        continue
                    event = EpisodeStep(
                        source=self.source,
                        seq=next_seq(),
                        episode_id=episode.id_,
                        env_index=i,
                        action=action,
                        reward=reward,
                        observation=rows[i],
                        info=info,
                    )
                    # _step_hook() inline (the hot path: one call less per step).
                    args = (episode, self, self.metrics, env, self.module, i)
                    if on_step.is_async:
                        control = await on_step.call(event, *args)
                    else:
                        control = on_step.call(event, *args)
                    if control is None or not self._ends_early(episode, control):
                        continue
                    step = None  # a handler ended the episode: its step is published
                    env.reset_next_step(i)
                await self._episode_ended(episode, step)
                done.append(episode)
                if exact and started >= max_episodes:
                    episodes[i] = None
                else:
                    episodes[i] = await self._new_episode(i)
                    resetting[i] = True
                    started += 1
            self._obs = obs
            self._timestep = timestep_before + steps
        return steps

    async def _step_hook(self, event: EpisodeStep, episode: Any, i: int) -> bool:
        """Run the ``on_episode_step`` chain (it has handlers) on ``event`` of a step that
        did not end ``episode``; return whether a handler ended it (``_ends_early``).

        The single-agent loop does the same inline: it is the hot path, and a call
        more per step shows in ``bench/sampling.py``."""
        on_step = self._on_step
        args = (episode, self, self.metrics, self.env, self.module, i)
        if on_step.is_async:
            control = await on_step.call(event, *args)  # type: ignore[misc]
        else:
            control = on_step.call(event, *args)  # type: ignore[misc]
        return control is not None and self._ends_early(episode, control)

    def _ends_early(self, episode: Any, control: Control) -> bool:
        """Keep an ``on_episode_step`` chain's Control; with ``end_episode``, truncate the
        episode now (and return True)."""
        self._publisher.add_control(control)
        if not control.end_episode:
            return False
        episode.truncate()  # a multi-agent episode's agents all leave truncated
        return True

    def _actions(self, explore: bool, random_actions: bool) -> Any:
        if random_actions or self.module is None:
            return np.asarray(self.env.action_space.sample())
        return self._exploration.get_actions(
            self.module, self._obs, self._rng, self._timestep, explore
        )

    def _cut(self, done: list[Episode], dropped: list[Episode]) -> list[Episode]:
        """Return the chunks to hand out: finished episodes, then the ongoing ones."""
        samples = []
        for episode in done:
            start = self._handed.pop(episode.id_, 0)
            samples.append(episode if start == 0 else episode.chunk(start))
        for episode in dropped:
            start = self._handed.pop(episode.id_, 0)
            if len(episode) > start:
                samples.append(episode.chunk(start))
        for ongoing, resetting in zip(self._episodes, self._resetting, strict=True):
            if ongoing is None:  # an idle sub-env (exact sampling) records nothing
                continue
            start = self._handed.get(ongoing.id_, 0)
            if resetting or len(ongoing) == start:
                continue
            samples.append(ongoing.chunk(start))
            self._handed[ongoing.id_] = len(ongoing)
        return samples

    # --- episode lifecycle ------------------------------------------------------------------

    async def _reset_all(self, limit: int | None = None) -> None:
        """Start one episode per sub-env: created (before the reset), reset, started.

        With ``limit``, only the first ``limit`` sub-envs get an episode; the others idle.
        """
        count = self.num_envs if limit is None else min(limit, self.num_envs)
        episodes: list[Episode | None] = [await self._new_episode(i) for i in range(count)]
        self._episodes = episodes + [None] * (self.num_envs - count)
        self._resetting = [False] * self.num_envs
        # Seed the first reset only: later (forced) resets go on from the envs' own RNGs, so
        # evaluation rounds do not replay the same initial states.
        seed, self._reset_seed = self._reset_seed, None
        obs, infos = self.env.reset(seed=seed)
        self._obs = obs
        for i, episode in enumerate(episodes):
            assert episode is not None
            episode.add_reset(obs[i], _sub_info(infos, i) if infos else {})
            await self._episode_started(episode)

    # --- the rest of the runner's API -------------------------------------------------------

    async def setup(self) -> None:
        """Publish ``on_environment_created`` (once; ``sample()`` does it if not done yet)."""
        if not self._announced:
            await self._announce()

    def compute_single_action(self, observation: Any, *, explore: bool | None = None) -> Any:
        """Return the module's action for one observation, through this runner's exploration.

        ``explore`` defaults to the config's; schedules (epsilon-greedy) apply at this
        runner's current timestep.
        """
        explore = self.config.explore if explore is None else explore
        batch = np.asarray(observation)[None]
        actions = self._exploration.get_actions(
            self.module, batch, self._rng, self._timestep, explore
        )
        return np.asarray(actions)[0]

    def take_control(self) -> Control | None:
        """Return what ``on_sample_end`` / ``on_episode_*`` handlers asked for since last time.

        The Algorithm reports it in ``train()``'s result; a worker process or Ray actor
        sends it back with each reply (``backends/_worker.py``).
        """
        return self._publisher.take_control()

    def get_metrics(self) -> dict[str, Any]:
        """Reduce this runner's metrics into a mergeable snapshot (plain data)."""
        return self.metrics.reduce()

    def set_weights(self, weights: dict[str, Any]) -> None:
        """Load the learner's module weights into this runner's module."""
        if self.module is not None:
            self.module.set_state(weights)

    def foreach_env(self, fn: Callable[[Any], Any]) -> list[Any]:
        """Call ``fn(sub_env)`` on every sub-env (unwrapped) and return the results."""
        return [fn(sub_env.unwrapped) for sub_env in self.env.envs]

    def foreach_env_with_context(self, fn: Callable[[Any, EnvContext], Any]) -> list[Any]:
        """Call ``fn(sub_env, env_context)`` on every sub-env and return the results."""
        return [
            fn(sub_env.unwrapped, self.env_context.with_vector_index(i))
            for i, sub_env in enumerate(self.env.envs)
        ]

    def stop(self) -> None:
        """Close the env."""
        self.env.close()

    def __repr__(self) -> str:
        return f"<EnvRunner {self.source} {env_name(self.config.env)} x{self.num_envs}>"


def _sub_info(infos: dict[str, Any], i: int) -> dict[str, Any]:
    """Pick sub-env ``i``'s info out of a vector env's batched info dict."""
    info = {}
    for key, values in infos.items():
        if key.startswith("_"):
            continue
        mask = infos.get("_" + key)
        if mask is not None and not mask[i]:
            continue
        info[key] = _sub_info(values, i) if isinstance(values, dict) else values[i]
    return info
