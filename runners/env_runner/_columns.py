"""The columnar sampling loop: a vector env's steps kept as arrays while nobody listens per step.

With no ``on_episode_step`` subscriber (no handler, no observer, no recorder of that hook),
nothing needs an episode between its start and its end. So the loop keeps one ``sample()``
call's vector steps as columns (observations, actions, rewards: an array row per vector
step, written in place) and finds the episodes that end with one numpy call per vector
step. Python runs per sub-env only where an episode starts or ends (and, with an exact
budget, on the vector step that meets it): there the sub-env's pending steps are sliced out
of the columns into its ``Episode`` (``Episode.add_steps``), and ``Sampling`` takes over as
in the per-step loop. Every ongoing episode is brought up to date before the loop returns.

What users see is what the per-step loop gives, hook for hook and step for step
(``tests/runners/env_runner/test_columnar.py``): the same events in the same order (less the
``on_episode_step`` ones nobody listens to); the same episodes (an episode keeps the
array of its observations whole and makes the rows, views of the columns as they were
views of each step's array, when read); the same budgets. The one difference: while the
loop runs, an ongoing episode other than the one a hook is about lags behind (its steps
are still in the columns).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from ._batched import sub_info
from ._sampling import Sampling

if TYPE_CHECKING:
    from ..episodes import Episode

Flags = npt.NDArray[np.bool_]
"""A vector step's ``terminateds`` or ``truncateds``: one flag per sub-env."""

__all__ = ("ColumnarLoop", "Columns", "VectorStepper")

_FIRST_CAPACITY = 256
"""Vector steps the columns hold at first when the budget does not say (they double)."""


class VectorStepper(Protocol):
    """What the columnar loop reads and sets of the strategy that owns the env."""

    env: Any
    resetting: list[bool]
    draining: list[bool]
    obs: Any

    def act(self, sampling: Sampling) -> Any:
        """Return every sub-env's action for the observations in ``obs``."""
        ...


class Columns:
    """One ``sample()`` call's vector steps: row ``t`` of each array is vector step ``t``.

    Allocated at the first step, shaped and typed like it (so ``tolist()`` gives the very
    Python values the per-step loop records); doubled when full. Episodes keep views of
    the observations, so a call's arrays live as long as its episodes do.
    """

    __slots__ = ("actions", "capacity", "infos", "observations", "rewards")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.observations: Any = None
        self.actions: Any = None
        self.rewards: Any = None
        self.infos: dict[int, dict[str, Any]] = {}
        """The batched infos of the vector steps that had any (most envs give none)."""

    def put(
        self,
        t: int,
        obs: npt.NDArray[Any],
        actions: npt.ArrayLike,
        rewards: npt.NDArray[Any],
        infos: dict[str, Any],
    ) -> None:
        """Write vector step ``t`` (the rows before it are written)."""
        if self.observations is None:
            self._allocate(obs, actions, rewards)
        elif t == self.capacity:
            self._grow()
        self.observations[t] = obs
        self.actions[t] = actions
        self.rewards[t] = rewards
        if infos:
            self.infos[t] = infos

    def info(self, t: int, i: int) -> dict[str, Any]:
        """Return sub-env ``i``'s info of vector step ``t``."""
        infos = self.infos.get(t)
        return {} if infos is None else sub_info(infos, i)

    def flush(
        self,
        episode: Episode,
        i: int,
        start: int,
        stop: int,
        terminated: bool = False,
        truncated: bool = False,
    ) -> None:
        """Append sub-env ``i``'s transitions of vector steps ``start`` to ``stop - 1`` to
        ``episode``; ``terminated``, ``truncated``: the last one's flags."""
        episode.add_steps(
            self.observations[start:stop, i],  # kept whole, as the actions and rewards
            self.actions[start:stop, i],  # (steps,) or (steps, *action_shape)
            self.rewards[start:stop, i],
            [self.info(t, i) for t in range(start, stop)] if self.infos else None,
            terminated,
            truncated,
        )

    def _allocate(self, obs: npt.ArrayLike, actions: npt.ArrayLike, rewards: npt.ArrayLike) -> None:
        obs, actions, rewards = np.asarray(obs), np.asarray(actions), np.asarray(rewards)
        size = self.capacity
        self.observations = np.empty((size, *obs.shape), obs.dtype)
        self.actions = np.empty((size, *actions.shape), actions.dtype)
        self.rewards = np.empty((size, *rewards.shape), rewards.dtype)

    def _grow(self) -> None:
        # New arrays, the old rows copied: episodes that ended keep views of the old ones.
        self.capacity *= 2
        for name in ("observations", "actions", "rewards"):
            old = getattr(self, name)
            new = np.empty((self.capacity, *old.shape[1:]), old.dtype)
            new[: len(old)] = old
            setattr(self, name, new)


class ColumnarLoop:
    """Step a vector env for one ``sample()`` call with its steps as ``Columns``.

    ``run()`` returns when the budget is met, or as soon as someone subscribes to
    ``on_episode_step`` (a handler added it mid-call): then every episode is up to date,
    and the per-step loop goes on from there.
    """

    __slots__ = ("_active", "_columns", "_since", "_starting", "_stepper", "sampling")

    def __init__(self, stepper: VectorStepper, sampling: Sampling) -> None:
        self._stepper, self.sampling = stepper, sampling
        n = stepper.env.num_envs
        episodes, resetting = sampling.episodes, stepper.resetting
        self._columns = Columns(_capacity(sampling.max_steps, n))
        self._since = [0] * n
        """Per sub-env: the vector step of its first transition not yet in its episode."""
        self._starting = {i for i in range(n) if episodes[i] is not None and resetting[i]}
        """The sub-envs whose next step is their reset (or plays an ended episode out)."""
        self._active = sum(e is not None for e in episodes) - len(self._starting)
        """How many sub-envs record a transition at the next vector step."""

    async def run(self, steps: int) -> int:
        """Step until the budget is met (``steps`` recorded so far in this call) or someone
        subscribes per step; return the transitions recorded in all."""
        # The hot loop: Python per vector step only. A vector step where no episode starts
        # or ends costs the policy, the env, three row writes and one flatnonzero.
        sampling, stepper, columns = self.sampling, self._stepper, self._columns
        env, done, on_step, exact = stepper.env, sampling.done, sampling.on_step, sampling.exact
        act, step, put = stepper.act, env.step, columns.put
        timestep_before, t = sampling.timestep - steps, 0
        while steps < sampling.max_steps and len(done) < sampling.max_episodes:
            if on_step.call is not None:  # subscribed meanwhile: the per-step loop goes on
                break
            actions = act(sampling)
            obs, rewards, terminateds, truncateds, infos = step(actions)
            put(t, obs, actions, rewards, infos)
            # The sub-envs whose episode ended (flatnonzero's C core: a third of its cost).
            ends = (terminateds | truncateds).nonzero()[0]
            if exact and (
                steps + self._active > sampling.max_steps
                or len(done) + len(ends) > sampling.max_episodes
            ):  # the budget may cut this step short: every sub-env in order, as per step
                steps = await self._every_sub_env(t, terminateds, truncateds, steps)
            elif self._starting or len(ends):  # episodes start or end: only those sub-envs
                recorded = self._active
                await self._boundaries(t, terminateds, truncateds, ends, steps)
                steps += recorded
            else:
                steps += self._active
            stepper.obs = obs
            sampling.timestep = timestep_before + steps
            t += 1
        self._flush_ongoing(t)
        return steps

    async def _boundaries(
        self, t: int, terminateds: Flags, truncateds: Flags, ends: npt.NDArray[np.intp], steps: int
    ) -> None:
        """Visit, in sub-env order, the sub-envs that start or end an episode at step ``t``
        (the budget is not met in this step: nothing to drop)."""
        episodes, stepper = self.sampling.episodes, self._stepper
        hooks = self.sampling.hooks
        on_started = hooks.on_started
        order = sorted(self._starting.union(ends.tolist())) if self._starting else ends.tolist()
        for i in order:
            episode = episodes[i]
            if episode is None:  # an idle sub-env (exact sampling)
                continue
            if stepper.resetting[i]:  # the flags matter only to a sub-env playing one out
                ended = stepper.draining[i] and bool(terminateds[i] or truncateds[i])
                if self._start(i, t, episode, ended) and on_started.call is not None:
                    await hooks.astarted(episode)
            else:
                await self._end(i, t, episode, bool(terminateds[i]), bool(truncateds[i]))

    async def _every_sub_env(
        self, t: int, terminateds: Flags, truncateds: Flags, steps: int
    ) -> int:
        """Visit every sub-env at step ``t`` in order, counting as the per-step loop does
        (exact budgets drop what lies beyond them); return the steps recorded in all."""
        term_list, trunc_list = terminateds.tolist(), truncateds.tolist()
        for i in range(len(term_list)):
            steps += await self._visit(i, t, term_list[i], trunc_list[i], steps)
        return steps

    async def _visit(self, i: int, t: int, terminated: bool, truncated: bool, steps: int) -> int:
        """Do what sub-env ``i``'s vector step ``t`` leads to under an exact budget, as the
        per-step loop would; return the transitions recorded (0 or 1). ``steps``: those
        recorded before it."""
        episode = self.sampling.episodes[i]
        if episode is None:  # an idle sub-env
            return 0
        if self._stepper.resetting[i]:
            hooks = self.sampling.hooks
            if self._start(i, t, episode, terminated or truncated) and hooks.on_started.call:
                await hooks.astarted(episode)
            return 0
        # The episode up to date before the budget may drop it.
        self._columns.flush(episode, i, self._since[i], t)
        self._since[i] = t
        if self.sampling.drops(i, steps, terminated or truncated):
            self._active -= 1
            return 0
        if terminated or truncated:
            await self._end(i, t, episode, terminated, truncated)
        return 1

    def _start(self, i: int, t: int, episode: Episode, ended: bool) -> bool:
        """Sub-env ``i``'s step ``t`` was its reset: put it into ``episode`` and return
        True (the caller publishes the start), or False while the sub-env plays out an
        episode a handler ended (``ended``: whether this step ends that one)."""
        stepper = self._stepper
        if stepper.draining[i]:  # not yet: it plays an episode a handler ended out
            stepper.draining[i] = not ended
            return False
        stepper.resetting[i] = False
        self._starting.discard(i)
        self._active += 1
        episode.add_reset(self._columns.observations[t, i], self._columns.info(t, i))
        self._since[i] = t + 1
        return True

    async def _end(
        self, i: int, t: int, episode: Episode, terminated: bool, truncated: bool
    ) -> None:
        """Sub-env ``i``'s step ``t`` ended ``episode``: hand its steps over and end it."""
        self._columns.flush(episode, i, self._since[i], t + 1, terminated, truncated)
        sampling = self.sampling
        await sampling.end(i, episode, False)
        self._since[i] = t + 1
        if self._stepper.resetting[i]:  # its next step is its reset (NEXT_STEP autoreset)
            self._starting.add(i)
            self._active -= 1
        elif sampling.episodes[i] is None:  # the budget is met (exact): idle now
            self._active -= 1

    def _flush_ongoing(self, stop: int) -> None:
        """Bring every ongoing episode up to date: its steps up to ``stop`` (exclusive)."""
        episodes, resetting, since = self.sampling.episodes, self._stepper.resetting, self._since
        for i, episode in enumerate(episodes):
            if episode is not None and not resetting[i] and since[i] < stop:
                self._columns.flush(episode, i, since[i], stop)
                since[i] = stop


def _capacity(max_steps: float, num_envs: int) -> int:
    """Return how many vector steps the columns hold at first: the budget's, if finite."""
    if math.isinf(max_steps):
        return _FIRST_CAPACITY
    return max(8, math.ceil(max_steps / max(1, num_envs)) + 8)
