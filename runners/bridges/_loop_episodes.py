"""A gymnasium env stepped by someone else's loop, followed as hookbus episodes.

``LoopEpisodes`` keeps one ``Episode`` per sub-env (one for a plain ``gymnasium.Env``) and
turns each ``reset()`` and ``step()`` the loop makes into the hooks of hookbus's own
EnvRunner, in its order per sub-env: ``on_episode_created`` before the reset that begins
an episode, ``on_episode_start`` once that reset is in it, ``on_episode_step`` per step
(the final one included), then ``on_episode_end``.

What each step means is read from what the env returned, not only from what it declares
(``metadata["autoreset_mode"]``), because envs differ from their declarations: CleanRL's
gymnasium 1.x ``SameModelSyncVectorEnv`` keeps ``SyncVectorEnv``'s NEXT_STEP
declaration and resets in the same step. So, per sub-env:

- a step that ends an episode **with a final observation in the infos** (``final_obs``,
  gymnasium 1.x's SAME_STEP key, or ``final_observation``, gymnasium 0.2x's) was reset in
  the same step: the episode's last step gets that observation and ``final_info``, and
  the next episode starts at once from the step's observation and its other infos;
- a step that ends one **without** was not: the next episode is created now and starts
  with the sub-env's next ``step()`` (NEXT_STEP: that step is the reset, not a transition)
  or with a ``reset()`` that resets it (DISABLED: ``options={"reset_mask": ...}``; a plain
  env's loop calling ``reset()``), whichever comes first.

A ``reset()`` of a sub-env whose episode is under way leaves that episode open (no
``on_episode_end``: it did not end), as an EnvRunner leaves its episodes at its end.
Batched infos (dicts of arrays with ``_key`` masks, nested) are split per sub-env.
Nothing here draws random numbers, and nothing the env returned is changed: episodes
hold copies of observations and their own info dicts.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hookbus.kernel import Dispatcher

from ..episodes import Episode, EpisodePublisher
from ._loop_columns import Columns

__all__ = ("FINAL_KEYS", "LoopEpisodes", "split_info", "told")

FINAL_OBSERVATION_KEYS = ("final_obs", "final_observation")
"""Where a same-step autoreset puts the final observation: gymnasium 1.x, gymnasium 0.2x."""

FINAL_KEYS = frozenset(
    key for name in (*FINAL_OBSERVATION_KEYS, "final_info") for key in (name, "_" + name)
)
"""The infos' keys of a same-step reset's final step: not part of the next reset's info."""

Resolve = Callable[[Dispatcher, Any], object]
"""Settle what a chain returned: run an async chain's awaitable, act on a Control."""


class LoopEpisodes:
    """Follow ``num_envs`` sub-envs' episodes; publish their hooks through ``hooks``.

    ``vector``: the env is a ``gymnasium.vector.VectorEnv`` (batched returns), else a
    plain ``gymnasium.Env`` (sub-env 0). ``resolve`` settles each chain's result.
    """

    __slots__ = (
        "_columns",
        "_hooks",
        "_resolve",
        "abandoned",
        "episodes",
        "num_envs",
        "vector",
        "waiting",
    )

    def __init__(
        self, hooks: EpisodePublisher, resolve: Resolve, num_envs: int, *, vector: bool
    ) -> None:
        self._hooks = hooks
        self._resolve = resolve
        self.num_envs = num_envs
        self.vector = vector
        self.episodes: list[Episode | None] = [None] * num_envs
        """Each sub-env's episode (None before its first reset)."""
        self.waiting: list[bool] = [False] * num_envs
        """Per sub-env: its episode is created and waits for the reset that starts it."""
        self.abandoned = 0
        """Episodes left open by a reset of their sub-env."""
        self._columns = Columns(num_envs) if vector else None

    # --- resets ---------------------------------------------------------------------------

    def before_reset(self, mask: Any) -> list[int]:
        """Create the episodes a reset begins (``mask``: the sub-envs it resets, None for
        all); return those sub-envs. Call before the env's ``reset()``."""
        if mask is None:
            targets = list(range(self.num_envs))
        else:
            targets = [i for i, chosen in enumerate(np.asarray(mask).tolist()) if chosen]
        self._catch_up(targets)  # an episode the reset leaves keeps every step it took
        for i in targets:
            if self.waiting[i]:  # created at its predecessor's end: the reset starts it
                continue
            episode = self.episodes[i]
            if episode is not None and not (episode.is_terminated or episode.is_truncated):
                self.abandoned += 1
            self._create(i)
        return targets

    def after_reset(self, targets: Sequence[int], observations: Any, infos: Any) -> None:
        """Start the episodes of ``targets`` from the env's reset ``observations``/``infos``."""
        rows = self._rows(observations)
        for i in targets:
            episode = self.episodes[i]
            if episode is not None and self.waiting[i]:
                self._start(i, episode, rows[i], self._info(infos, i))

    # --- steps ----------------------------------------------------------------------------

    def step(
        self,
        actions: Any,
        observations: Any,
        rewards: Any,
        terminations: Any,
        truncations: Any,
        infos: Any,
    ) -> None:
        """Record one (vector) step into each sub-env's episode and publish its hooks.

        With nobody listening to ``on_episode_step``, a vector env's arrays go into the
        columns (``_loop_columns``) and Python runs per sub-env only where an episode
        starts or ends; else each sub-env's step goes into its episode as it comes.
        """
        columns = self._columns
        if (
            columns is not None
            and self._hooks.on_step.call is None
            and isinstance(observations, np.ndarray)
            and isinstance(actions, np.ndarray)
        ):
            if not columns.fits(observations, actions):
                self._catch_up()
                columns.clear()
            self._step_columns(actions, observations, rewards, terminations, truncations, infos)
            return
        if columns is not None and columns.t:
            self._catch_up()  # the episodes' pending rows first: someone listens now
            columns.clear()
        if self.vector:
            rows = self._rows(observations)
            actions_of = _action_rows(actions)
            reward_list: list[Any] = np.asarray(rewards).tolist()
            term_list: list[Any] = np.asarray(terminations).tolist()
            trunc_list: list[Any] = np.asarray(truncations).tolist()
        else:
            rows = [_copied(observations)]
            actions_of = [_plain(actions)]
            reward_list, term_list, trunc_list = [rewards], [terminations], [truncations]
        hooks, resolve, episodes, waiting = self._hooks, self._resolve, self.episodes, self.waiting
        on_step = hooks.on_step
        for i in range(self.num_envs):
            episode = episodes[i]
            if episode is None:  # stepped before its first reset: no episode to follow
                continue
            if waiting[i]:  # this step was the sub-env's reset (NEXT_STEP autoreset)
                self._start(i, episode, rows[i], self._info(infos, i))
                continue
            terminated, truncated = bool(term_list[i]), bool(trunc_list[i])
            reward = float(reward_list[i])
            done = terminated or truncated
            final = self._final_observation(infos, i) if done and infos else None
            if final is None:
                observation, info = rows[i], self._info(infos, i)
            else:
                observation, info = final
            episode.add_step(observation, actions_of[i], reward, terminated, truncated, info)
            if on_step.call is not None:
                resolve(on_step, hooks.step(episode, actions_of[i], reward, observation, info))
            if done:
                self._end(i, episode, final, rows[i], infos)

    def _step_columns(
        self,
        actions: Any,
        observations: Any,
        rewards: Any,
        terminations: Any,
        truncations: Any,
        infos: Any,
    ) -> None:
        """``step()`` while nobody listens per step: the arrays go into the columns."""
        columns, episodes, waiting = self._columns, self.episodes, self.waiting
        assert columns is not None
        if columns.full():
            columns.regrow(self._pending_starts())
        t = columns.put(observations, actions, rewards)
        term_list, trunc_list = terminations.tolist(), truncations.tolist()
        if infos:  # the env said something: the share of each sub-env it spoke of, by row
            for i in told(infos, self.num_envs):
                if episodes[i] is not None and not waiting[i]:
                    info = split_info(infos, i, FINAL_KEYS)
                    if info:
                        columns.infos[i][t] = info
        if not (True in term_list or True in trunc_list or True in waiting):
            return
        for i in range(self.num_envs):  # in sub-env order, as the per-step loop publishes
            episode = episodes[i]
            if episode is None:
                continue
            if waiting[i]:  # this step was the sub-env's reset (NEXT_STEP autoreset)
                self._start(i, episode, columns.observations[t, i], self._info(infos, i))
                continue
            terminated, truncated = bool(term_list[i]), bool(trunc_list[i])
            if not (terminated or truncated):
                continue
            final = self._final_observation(infos, i) if infos else None
            first = columns.observations[t, i]  # the next episode's, if it starts now
            if final is not None:  # reset in this step: the row becomes the final step's
                first = _copied(observations[i])
                columns.observations[t, i], columns.infos[i][t] = final
            columns.hand(i, t + 1, episode, terminated, truncated)
            self._end(i, episode, final, first, infos)

    def _catch_up(self, targets: Sequence[int] | None = None) -> None:
        """Bring the episodes under way (of ``targets``, None: all) up to date with their
        rows in the columns."""
        columns = self._columns
        if columns is None or not columns.t:
            return
        for i in range(self.num_envs) if targets is None else targets:
            episode = self.episodes[i]
            if episode is not None and not self.waiting[i] and columns.starts[i] < columns.t:
                columns.hand(i, columns.t, episode, False, False)

    def _pending_starts(self) -> list[int]:
        """Return the starts of the episodes under way: their rows are still needed."""
        starts, waiting = self._columns.starts, self.waiting  # type: ignore[union-attr]
        return [starts[i] for i, e in enumerate(self.episodes) if e is not None and not waiting[i]]

    def _end(self, i: int, episode: Episode, final: Any, observation: Any, infos: Any) -> None:
        """Publish ``episode``'s end and create its successor, started at once if the env
        reset the sub-env in this same step (``final``) from its ``observation``."""
        hooks = self._hooks
        if hooks.on_ended.call is not None:
            self._resolve(hooks.on_ended, hooks.ended(episode))
        successor = self._create(i)
        if final is not None:
            self._start(i, successor, observation, self._reset_info(infos, i))

    # --- internals --------------------------------------------------------------------------

    def _create(self, i: int) -> Episode:
        episode = self.episodes[i] = Episode(i)
        self.waiting[i] = True
        hooks = self._hooks
        if hooks.on_created.call is not None:
            self._resolve(hooks.on_created, hooks.created(episode))
        return episode

    def _start(self, i: int, episode: Episode, observation: Any, info: dict[str, Any]) -> None:
        self.waiting[i] = False
        if self._columns is not None:  # its steps are the rows from the next one on
            self._columns.starts[i] = self._columns.t
        episode.add_reset(observation, info)
        hooks = self._hooks
        if hooks.on_started.call is not None:
            self._resolve(hooks.on_started, hooks.started(episode))

    def _rows(self, observations: Any) -> Any:
        """Return what ``[i]`` gives sub-env ``i``'s observation of (a copy's rows)."""
        if not self.vector:
            return [_copied(observations)]
        if isinstance(observations, np.ndarray):
            return np.array(observations)  # rows of the copy are views: no copy per sub-env
        return [_row(observations, i) for i in range(self.num_envs)]

    def _info(self, infos: Any, i: int) -> dict[str, Any]:
        """Return sub-env ``i``'s info of a step or reset (never a same-step reset's final
        observation or info: those are its final step's)."""
        if not infos:
            return {}
        return split_info(infos, i, FINAL_KEYS) if self.vector else dict(infos)

    def _reset_info(self, infos: Any, i: int) -> dict[str, Any]:
        """Return the info of a same-step reset: the step's infos less the final step's."""
        if self.vector:
            return split_info(infos, i, skip=FINAL_KEYS)
        return {key: value for key, value in infos.items() if key not in FINAL_KEYS}

    def _final_observation(self, infos: Any, i: int) -> tuple[Any, dict[str, Any]] | None:
        """Return sub-env ``i``'s final observation and info if the env reset it in this
        step (a same-step autoreset put them in the infos), else None."""
        for key in FINAL_OBSERVATION_KEYS:
            if key not in infos:
                continue
            if not self.vector:
                return _copied(infos[key]), dict(infos.get("final_info") or {})
            mask = infos.get("_" + key)
            if mask is not None and not mask[i]:
                return None
            final_info = infos.get("final_info")
            info_mask = infos.get("_final_info")
            if not isinstance(final_info, dict) or (info_mask is not None and not info_mask[i]):
                return _copied(infos[key][i]), {}
            return _copied(infos[key][i]), split_info(final_info, i)
        return None


def told(infos: dict[str, Any], num_envs: int) -> Sequence[int]:
    """Return the sub-envs a vector env's batched ``infos`` hold anything for, besides a
    same-step reset's final step (by the keys' ``_key`` masks; a key without one: all)."""
    masks = None
    for key in infos:
        if key[:1] == "_" or key in FINAL_KEYS:
            continue
        mask = infos.get("_" + key)
        if mask is None:
            return range(num_envs)
        masks = mask if masks is None else masks | mask
    return () if masks is None else np.flatnonzero(masks).tolist()


def split_info(infos: dict[str, Any], i: int, skip: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Return sub-env ``i``'s info from a vector env's batched ``infos`` (keys in ``skip``
    left out): a key whose ``_key`` mask is False for ``i`` is not in it, nor are the
    masks; nested dicts are split alike. As ``env_runner``'s split, which a bridge does
    not import (it would load the EnvRunners), with ``skip`` for a same-step reset."""
    info = {}
    for key, values in infos.items():
        if key[:1] == "_" or key in skip:
            continue
        mask = infos.get("_" + key)
        if mask is not None and not mask[i]:
            continue
        info[key] = split_info(values, i) if type(values) is dict else values[i]
    return info


def _copied(observation: Any) -> Any:
    """Return a copy of one observation (an array, or a dict or tuple of them)."""
    if isinstance(observation, np.ndarray):
        return np.array(observation)
    return copy.deepcopy(observation)


def _row(batch: Any, i: int) -> Any:
    """Return sub-env ``i``'s row of a batched observation (a dict or tuple of arrays too)."""
    if isinstance(batch, dict):
        return {key: _row(value, i) for key, value in batch.items()}
    if isinstance(batch, tuple):
        return tuple(_row(value, i) for value in batch)
    return _copied(batch[i])


def _action_rows(actions: Any) -> Any:
    """Return what ``[i]`` gives sub-env ``i``'s action of: Python numbers for a vector of
    scalars (as the episodes of hookbus's runners hold them), else copied rows."""
    if isinstance(actions, np.ndarray):
        return actions.tolist() if actions.ndim == 1 else np.array(actions)
    if isinstance(actions, dict | tuple):
        count = len(next(iter(actions.values() if isinstance(actions, dict) else actions)))
        return [_row(actions, i) for i in range(count)]
    return _action_rows(np.asarray(actions))


def _plain(action: Any) -> Any:
    """Return a plain env's action as its episode keeps it: a numpy scalar as Python's."""
    if isinstance(action, np.generic):
        return action.item()
    return _copied(action)
