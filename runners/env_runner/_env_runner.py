"""The EnvRunner: steps its env into episodes, publishes the EnvRunner hooks."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec
import numpy as np
from numpy.typing import NDArray

from hookbus.events import SampleEnd
from hookbus.kernel import Bus, Control, Publisher
from hookbus.metrics import MetricsLogger

from .._loop import LoopThread, blocking
from ..config import DEFAULT_MODULE_ID
from ..envs import EnvContext, EnvToModule, env_name, foreach_sub_env
from ..episodes import Episode, EpisodePublisher
from ._requests import SampleRequest, SampleSummary
from ._sampling import Sampling, Steps, StepsFactory
from ._steps import VectorEnvSteps

if TYPE_CHECKING:
    from .._rl_module import MultiRLModule, RLModule
    from ..config import AlgorithmConfig

__all__ = ("EnvRunner",)

_LIFETIME_STEPS = "num_env_steps_sampled_lifetime"
# RLlib's keys (ray.rllib.env) of the env's own spaces in get_spaces()'s dict.
INPUT_ENV_SPACES = "__env__"
INPUT_ENV_SINGLE_SPACES = "__env_single__"


class EnvRunner:
    """Sample episodes from ``num_envs_per_env_runner`` sub-envs, publishing every hook.

    ``config`` is the Algorithm's config (``config.in_evaluation`` tells an evaluation
    runner); ``module`` chooses actions (``forward_exploration(obs, rng)`` /
    ``forward_inference(obs)``). Its API is RLlib's and sync (``sample()``, ``get_metrics()``,
    ``get_state()``, ``make_env()``, ``ping()``, ``stop()``), so the functions users send
    through ``foreach_env_runner`` call it as in RLlib; ``asample()`` is the async twin the
    Algorithm and async code await. The runner keeps no state bound to an event loop: a
    sync ``sample()`` runs on the loop the runner belongs to (``loop``, set by its group),
    from a worker thread of it, or, for a runner on its own (a worker process), on a
    fresh one.

    How it steps its env is its ``steps_class``'s (``_steps.Steps``: a gymnasium vector env
    here, multi-agent envs in ``MultiAgentEnvRunner``); what a step leads to, every hook
    included, is the same for both (``_sampling.Sampling``, ``episodes.EpisodePublisher``).
    """

    steps_class: ClassVar[StepsFactory] = VectorEnvSteps
    """How this runner steps its env (``MultiAgentEnvRunner``: ``MultiAgentSteps``)."""

    def __init__(
        self,
        config: AlgorithmConfig[Any],
        *,
        bus: Bus,
        module: RLModule | MultiRLModule | None = None,
        worker_index: int = 0,
    ) -> None:
        self.config = config
        self.bus = bus
        # Read as Any: fleet/_group.py's current_weights() and the multi-agent runner's
        # module[policy_id] take it as present and multi; narrow it when they check.
        self.module: Any = module
        self.worker_index = worker_index
        self.num_workers: int = config.num_env_runners
        """How many remote runners the group has (RLlib's name)."""
        self.loop: LoopThread | None = None
        """The Algorithm's own loop thread, where a sync ``sample()`` from elsewhere goes."""
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
        self._steps: Steps = self.steps_class(config, self.env_context, seed=self._reset_seed)
        self.env = self._steps.env
        """The vector env (the ``env`` of the episode hooks): under SYNC, ``env.envs[i].
        unwrapped`` is sub-env ``i``; ASYNC and VECTOR_ENTRY_POINT have no ``envs``."""
        self.num_envs: int = self.env.num_envs
        self._announced = False  # on_environment_created published?
        # Per sub-env: the live episode, and how many of its steps were handed out already.
        self._episodes: list[Any] = []  # Episode, or None: an idle sub-env (exact sampling)
        self._handed: dict[str, int] = {}
        self._needs_reset = True  # no episodes under way: the next sample() resets the env
        # The one path onto the bus; the module is passed per event (the learner sets it later).
        self._publisher = Publisher(
            bus, self.source, env_runner=self, metrics_logger=self.metrics, env=self.env
        )
        # Every episode hook and the env's creation; it reads self.module at each publish.
        self._hooks = EpisodePublisher(
            self._publisher,
            env=self.env,
            metrics_logger=self.metrics,
            env_runner=self,
            module_from=self,
        )
        self._sampling = Sampling(self, self._steps, self._hooks, self._rng)

    # --- sampling ---------------------------------------------------------------------------

    def sample(
        self,
        num_timesteps: int | None = None,
        num_episodes: int | None = None,
        explore: bool | None = None,
        random_actions: bool = False,
        *,
        force_reset: bool = False,
        exact: bool = False,
    ) -> list[Episode]:
        """Sync twin of ``asample()``, RLlib's ``EnvRunner.sample()``: same keywords, result.

        Works in the functions ``foreach_env_runner`` runs (they run in a worker thread, or
        in a worker process), from scripts and from other threads; on the event loop's own
        thread (a sync handler of a per-step hook, say) it would deadlock, and raises an
        ``AlgorithmStateError`` naming ``await env_runner.asample(...)`` instead.
        """
        request = SampleRequest(
            num_timesteps=num_timesteps,
            num_episodes=num_episodes,
            explore=explore,
            random_actions=random_actions,
            force_reset=force_reset,
            exact=exact,
        )
        return blocking(self.loop, "env_runner.asample(...)", self.sample_request, request)

    async def asample(
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
        if not self._announced:
            await self._announce()
        target = request.complete_episodes_to
        if target is None and request.num_timesteps is request.num_episodes is None:
            if self.config.batch_mode == "complete_episodes":
                target = self.config.train_batch_size  # RLlib's sample() with no budget
        if target is None:
            samples, steps = await self._sample_once(request)
        else:  # whole episodes, round after round, published as one call
            rounds = msgspec.structs.replace(
                request, complete_episodes_to=None, num_episodes=self.num_envs, exact=True
            )
            samples, steps = [], 0
            while steps < target:
                more, taken = await self._sample_once(rounds)
                samples += more
                steps += taken
        if self._publisher.wants(SampleEnd):
            await self._publisher.publish(
                SampleEnd,
                {"samples": samples},
                num_env_steps=steps,
                episode_ids=[episode.id_ for episode in samples],
            )
        return samples

    async def _sample_once(self, request: SampleRequest) -> tuple[list[Episode], int]:
        """Step the envs for one budget; return the chunks and the env steps taken."""
        if request.force_reset:
            self._drop_ongoing()
        if self._needs_reset:
            # Exact: only as many episodes as the budget; the other sub-envs step unrecorded.
            await self._reset_all(request.num_episodes if request.exact else None)
        done: list[Episode] = []
        dropped: list[Episode] = []  # cut short by an exact budget: handed out, never resumed
        self._sampling.begin(self._episodes, request, done, dropped if request.exact else None)
        # The strategy's loop; what each step leads to is self._sampling's (_steps.py).
        try:
            steps = await self._steps.run(self._sampling)
        finally:
            # Finished episodes live no longer than the caller keeps them: a runner that
            # held thousands between calls made every full garbage collection slower.
            self._sampling.finish()
        samples = self._cut(done, dropped)
        if request.exact and None in self._episodes:
            self._drop_ongoing()  # idle or cut sub-envs: the next call starts afresh
        return samples, steps

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
        self._needs_reset = True
        self._episodes = []
        self._steps.resetting = []
        self._handed.clear()

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
        for ongoing, resetting in zip(self._episodes, self._steps.resetting, strict=True):
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
        """Start one episode per sub-env (with ``limit``, the first ``limit``; the others idle)."""
        count = self.num_envs if limit is None else min(limit, self.num_envs)
        # Seed the first reset only: later (forced) resets go on from the envs' own RNGs, so
        # evaluation rounds do not replay the same initial states.
        seed, self._reset_seed = self._reset_seed, None
        self._episodes = await self._steps.reset(self._hooks, count, seed)
        self._needs_reset = False

    async def _announce(self) -> None:
        self._announced = True
        await self._hooks.aenvironment_created(
            self.env_context,
            env_id=env_name(self.config.env),
            num_envs=self.num_envs,
            worker_index=self.worker_index,
            in_evaluation=self.config.in_evaluation,
        )

    # --- the rest of the runner's API -------------------------------------------------------

    @property
    def event_seq(self) -> int:
        """The ``seq`` this runner's next event gets, under its ``source``.

        A restarted runner is set to go on from its predecessor's (docs/recording.md): its
        source's numbering never starts over.
        """
        return self._publisher.seq

    @event_seq.setter
    def event_seq(self, seq: int) -> None:
        self._publisher.seq = seq

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
        batch = self.module_observations([observation])
        actions = self._steps.exploration.get_actions(
            self.module, batch, self._rng, self._sampling.timestep, explore
        )
        return np.asarray(actions)[0]

    @property
    def module_observation_space(self) -> Any:
        """The observation space the module takes: the env-to-module pipeline's output
        (a flat Box), or the env's own when it needs no pipeline."""
        to_module = self._to_module
        return (
            self.env.single_observation_space if to_module is None else to_module.observation_space
        )

    def module_observations(
        self, observations: Sequence[Any], episode: Episode | None = None
    ) -> NDArray[Any]:
        """Return ``observations`` (a sequence, e.g. an episode's) as the module takes them:
        through the env-to-module pipeline, stacked into one array."""
        to_module = self._to_module
        return (
            np.asarray(observations)
            if to_module is None
            else to_module.stack(observations, episode)
        )

    def episode_observations(self, episode: Episode) -> NDArray[Any]:
        """Return ``episode``'s observations as the module takes them, stacked: what
        ``module_observations(episode.observations)`` gives, without a row per step when
        the env needs no pipeline (the episode's own arrays, ``get_observations()``)."""
        to_module = self._to_module
        if to_module is None:
            return np.asarray(episode.get_observations())
        return to_module.stack(episode.observations, episode)

    @property
    def _to_module(self) -> EnvToModule | None:
        steps = self._steps
        return steps.to_module if isinstance(steps, VectorEnvSteps) else None

    def get_spaces(self) -> dict[str, tuple[Any, Any]]:
        """Return the spaces, RLlib's dict: module id -> (observation space, action space),
        and the env's own under ``"__env__"`` (the vector env's) and ``"__env_single__"``
        (one sub-env's), RLlib's ``INPUT_ENV_SPACES`` and ``INPUT_ENV_SINGLE_SPACES``.

        A module's observation space is the one it takes: after the env-to-module pipeline.
        """
        env = self.env
        return {
            INPUT_ENV_SPACES: (env.observation_space, env.action_space),
            INPUT_ENV_SINGLE_SPACES: (env.single_observation_space, env.single_action_space),
            **self._module_spaces(),
        }

    def _module_spaces(self) -> dict[str, tuple[Any, Any]]:
        return {DEFAULT_MODULE_ID: (self.module_observation_space, self.env.single_action_space)}

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

    def get_state(self) -> dict[str, Any]:
        """Return the runner's state, RLlib's keys: ``rl_module`` (the module's weights) and
        ``num_env_steps_sampled_lifetime``. Plain data (``events.codec`` encodes it)."""
        return {
            "rl_module": None if self.module is None else self.module.get_state(),
            _LIFETIME_STEPS: self._sampling.timestep,
        }

    def set_state(self, state: dict[str, Any]) -> None:
        """Load what ``get_state()`` returned (either key may be left out)."""
        unknown = set(state) - {"rl_module", _LIFETIME_STEPS}
        if unknown:
            raise KeyError(
                f"EnvRunner.set_state() got unknown keys {sorted(unknown)!r}; "
                f"it takes 'rl_module' and {_LIFETIME_STEPS!r}"
            )
        if state.get("rl_module") is not None:
            self.set_weights(state["rl_module"])
        if _LIFETIME_STEPS in state:
            self._sampling.timestep = int(state[_LIFETIME_STEPS])

    def make_env(self) -> None:
        """Close the env and make it anew from ``config.env_config`` (RLlib's ``make_env``).

        As in RLlib, change ``env_runner.config.env_config`` and call this to sample from
        envs made with the new settings. The ongoing episodes are dropped (the next
        ``sample()`` resets), and ``on_environment_created`` is published for the new env
        when the next ``sample()`` starts.
        """
        self.env.close()
        self.env_context = EnvContext(
            dict(self.config.env_config),
            worker_index=self.worker_index,
            num_workers=self.num_workers,
            in_evaluation=self.config.in_evaluation,
            services=self.bus.services,
        )
        timestep = self._sampling.timestep
        self._steps = self.steps_class(self.config, self.env_context, seed=None)
        self.env = self._steps.env
        self.num_envs = self.env.num_envs
        self._publisher.set_fixed(env=self.env)
        self._hooks.env = self.env
        self._sampling = Sampling(self, self._steps, self._hooks, self._rng)
        self._sampling.timestep = timestep
        self._drop_ongoing()
        self._announced = False

    def ping(self) -> str:
        """Return ``"pong"``: the runner answers (RLlib's health probe)."""
        return "pong"

    def foreach_env(self, fn: Callable[[Any], Any]) -> list[Any]:
        """Call ``fn(sub_env)`` on every sub-env (unwrapped) and return the results.

        Under ``gym_env_vectorize_mode="ASYNC"`` ``fn`` runs in each sub-env's process
        (it and its results must pickle); a ``"VECTOR_ENTRY_POINT"`` env has no sub-envs,
        so ``fn`` gets the vector env itself, once (docs/vectorize.md).
        """
        return foreach_sub_env(self.env, fn)

    def foreach_env_with_context(self, fn: Callable[[Any, EnvContext], Any]) -> list[Any]:
        """Call ``fn(sub_env, env_context)`` on every sub-env and return the results (each
        vectorize mode as ``foreach_env``)."""
        return foreach_sub_env(self.env, fn, self.env_context)

    def stop(self) -> None:
        """Close the env."""
        self.env.close()

    def __repr__(self) -> str:
        return f"<EnvRunner {self.source} {env_name(self.config.env)} x{self.num_envs}>"
