"""What every sampling loop shares: ``Sampling`` (what a recorded step may lead to) and
the ``Steps`` strategy Protocol the loops implement.

An EnvRunner samples through its ``Steps`` strategy (``VectorEnvSteps`` for gymnasium
vector envs, ``MultiAgentSteps`` beside ``MultiAgentEnvRunner``). Everything a recorded step
may lead to is ``Sampling``'s, the same for every loop: the budget (exact sampling's drops),
a handler's ``Control``, and an episode's end (``end``: the episode's hooks, then the
sub-env's next episode). Every hook is published through the runner's
``episodes.EpisodePublisher`` (``hooks``): the loops call its ``step()`` per step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from hookbus.kernel import Control, Dispatcher

from ..envs import EnvContext
from ..episodes import EpisodePublisher
from ._requests import SampleRequest

if TYPE_CHECKING:
    from ..config import AlgorithmConfig
    from ..episodes import EpisodeLike
    from ._env_runner import EnvRunner

__all__ = ("Sampling", "Steps", "StepsFactory")


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

    async def reset(self, hooks: EpisodePublisher, count: int, seed: int | None) -> list[Any]:
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

    async def restart(self, i: int, hooks: EpisodePublisher) -> Any:
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
    ``hooks`` publishes the runner's episode hooks.
    """

    __slots__ = (
        "_runner",
        "_steps",
        "done",
        "dropped",
        "episodes",
        "exact",
        "explore",
        "hooks",
        "max_episodes",
        "max_steps",
        "on_step",
        "random_actions",
        "rng",
        "started",
        "timestep",
    )

    def __init__(
        self,
        runner: EnvRunner,
        stepper: Steps,
        hooks: EpisodePublisher,
        rng: np.random.Generator,
    ) -> None:
        self._runner, self._steps = runner, stepper
        self.hooks, self.rng, self.timestep = hooks, rng, 0
        self.on_step: Dispatcher = hooks.on_step
        """The step hook's dispatcher: ``call`` None means nobody listens (build nothing)."""
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

    def ends_early(self, episode: EpisodeLike, control: Control, ended: bool) -> bool:
        """Keep an ``on_episode_step`` chain's Control; with ``end_episode`` on a step that
        did not end ``episode``, truncate it now (and return True)."""
        self.hooks.publisher.add_control(control)
        if ended or not control.end_episode:
            return False
        episode.truncate()  # a multi-agent episode's agents all leave truncated
        return True

    async def end(self, i: int, episode: EpisodeLike, early: bool) -> None:
        """Finish sub-env ``i``'s ``episode`` (its last step is published): publish its end,
        then give the sub-env its next episode, unless the budget is met (exact)."""
        if early:
            self._steps.end_early(i)
        await self.hooks.aended(episode, early)
        self.done.append(episode)
        if self.exact and self.started >= self.max_episodes:
            self.episodes[i] = None
        else:
            self.episodes[i] = await self._steps.restart(i, self.hooks)
            self.started += 1
