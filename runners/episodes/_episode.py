"""A single-agent episode: built by EnvRunners, rebuilt by replay, read by callbacks."""

from __future__ import annotations

import copy
import functools
import itertools
import operator
import os
import sys
from collections.abc import Sequence
from time import perf_counter
from typing import Any

import numpy as np
import numpy.typing as npt

from ._episode_state import load_single_agent, single_agent_state
from ._lookback import Indices, Lookback, gather, gather_with_lookback

__all__ = ("Episode", "Indices", "SingleAgentEpisode", "new_episode_id")


def new_episode_id() -> str:
    """Return a fresh episode id: 32 hex digits, as ``uuid4().hex`` has.

    Sixteen digits of the OS's randomness drawn once per process (again in a forked
    child), then a counter: ids are unique across runners and processes as uuid4's are,
    with no system call per episode (``os.urandom`` took 0.5-2.4 us a call here, most of
    an episode's creation; episodes start by the thousand). Ids name, they guard nothing.
    """
    return hex(next(_episode_ids))[2:]  # the prefix's top bit is set: always 32 digits


def _renew_ids() -> None:
    global _episode_ids
    prefix = int.from_bytes(os.urandom(8), "big") | 1 << 63
    _episode_ids = itertools.count(prefix << 64)


_episode_ids = itertools.count()
_renew_ids()
os.register_at_fork(after_in_child=_renew_ids)


if sys.version_info < (3, 12):
    _added = sum  # adds floats one by one, left to right, in C: as add_step's += does
else:  # sum() compensates rounding since 3.12: one by one as add_step does, in Python

    def _added(values: list[float], start: float) -> float:
        return functools.reduce(operator.add, values, start)


class TemporaryData:
    """Per-step scratch lists that callbacks keep on an episode (never sent to the learner).

    An episode stores what it is given (scratch values, observations, actions) and hands it
    back without looking inside: those parameters are ``object``; what it reads (rewards,
    flags, infos) is typed.
    """

    __slots__ = ()
    _temporary: dict[str, list[Any]]
    id_: str

    def add_temporary_timestep_data(self, key: str, value: object) -> None:
        """Append ``value`` to the per-step scratch list ``key`` (not sent to the learner)."""
        data = self._temporary.get(key)
        if data is None:
            self._temporary[key] = [value]
        else:
            data.append(value)

    def get_temporary_timestep_data(self, key: str) -> list[Any]:
        """Return the values added under ``key``, in order."""
        try:
            return self._temporary[key]
        except KeyError:
            known = ", ".join(map(repr, self._temporary)) or "none"
            raise KeyError(
                f"no temporary timestep data {key!r} in episode {self.id_}; keys: {known}"
            ) from None


class Episode(TemporaryData):
    """Hold one episode's observations, actions, rewards and infos, step by step.

    ``observations`` has one more entry than ``actions``: the first comes from the reset. The
    object a callback receives is the whole episode, across ``sample()`` calls; ``sample()``
    returns chunks (copies holding the steps not handed out before, ``t_started`` saying
    where each starts). RLlib's timesteps: ``t_started`` is the step a chunk starts at and
    ``t`` the step it is at, so ``len(episode) == t - t_started``.
    """

    __slots__ = (
        "_actions",
        "_end_time",
        "_handed_at",
        "_infos",
        "_lookback",
        "_observations",
        "_pending",
        "_pending_steps",
        "_return",
        "_rewards",
        "_start_time",
        "_temporary",
        "agent_id",
        "custom_data",
        "env_index",
        "id_",
        "is_terminated",
        "is_truncated",
        "module_id",
        "t_started",
    )

    def __init__(self, env_index: int = 0, id_: str | None = None, t_started: int = 0) -> None:
        self.id_: str = id_ if id_ is not None else new_episode_id()
        self.env_index = env_index
        self.t_started = t_started
        self._observations: list[Any] = []
        self._actions: list[Any] = []
        self._rewards: list[float] = []
        self._infos: list[dict[str, Any]] = []
        # Steps add_steps() kept whole: (the observations' rows as one array, the actions and
        # the rewards as arrays or lists, the infos or None for an empty dict each), in
        # order after the lists; made list items when one of the lists is read. A tuple,
        # and arrays: the garbage collector has nothing to follow in an episode's blocks.
        self._pending: tuple[tuple[Any, Any, Any, list[dict[str, Any]] | None], ...] | None
        self._pending = None
        self._pending_steps = 0  # the steps in _pending
        self.is_terminated = False
        self.is_truncated = False
        self.custom_data: dict[str, Any] = {}
        """Anything a callback wants to keep with the episode."""
        self._temporary: dict[str, list[Any]] = {}
        self._return = 0.0
        self.agent_id: Any = None
        """In a ``MultiAgentEpisode``: the agent this episode belongs to (None otherwise)."""
        self.module_id: str | None = None
        """In a ``MultiAgentEpisode``: the module (policy) that acts for the agent."""
        self._lookback: Lookback | None = None  # steps before t_started, from cut()
        # perf_counter() at the reset, at the end (the final step or truncate()) and at the
        # last chunk(): what get_duration_s() and the chunks' durations read.
        self._start_time: float | None = None
        self._end_time: float | None = None
        self._handed_at: float | None = None

    @classmethod
    def from_steps(
        cls,
        *,
        observations: list[Any],
        actions: list[Any],
        rewards: list[float],
        infos: list[dict[str, Any]],
        terminated: bool = False,
        truncated: bool = False,
        env_index: int = 0,
        id_: str | None = None,
        t_started: int = 0,
    ) -> Episode:
        """Build an episode (or chunk) from whole lists: one more observation than actions."""
        if len(observations) != len(actions) + 1 or len(rewards) != len(actions):
            raise ValueError(
                f"an episode needs one observation more than actions and one reward per "
                f"action, got {len(observations)} observations, {len(actions)} actions and "
                f"{len(rewards)} rewards"
            )
        episode = cls(env_index, id_, t_started)
        episode.observations = observations
        episode.actions = actions
        episode.rewards = rewards
        episode.infos = infos
        episode.is_terminated = terminated
        episode.is_truncated = truncated
        episode._return = float(sum(rewards))
        return episode

    # --- the lists, and the steps kept whole ---------------------------------------------

    @property
    def observations(self) -> list[Any]:
        """The observations: the reset's, then one per step (a list)."""
        if self._pending is not None:
            self._settle()
        return self._observations

    @observations.setter
    def observations(self, value: list[Any]) -> None:
        if self._pending is not None:  # the steps kept whole belong to the list replaced
            self._settle()
        self._observations = value

    @property
    def actions(self) -> list[Any]:
        """The actions, one per step (a list)."""
        if self._pending is not None:
            self._settle()
        return self._actions

    @actions.setter
    def actions(self, value: list[Any]) -> None:
        if self._pending is not None:
            self._settle()
        self._actions = value

    @property
    def rewards(self) -> list[float]:
        """The rewards, one per step (a list)."""
        if self._pending is not None:
            self._settle()
        return self._rewards

    @rewards.setter
    def rewards(self, value: list[float]) -> None:
        if self._pending is not None:
            self._settle()
        self._rewards = value

    @property
    def infos(self) -> list[dict[str, Any]]:
        """The info dicts, one per observation (a list)."""
        if self._pending is not None:
            self._settle()
        return self._infos

    @infos.setter
    def infos(self, value: list[dict[str, Any]]) -> None:
        if self._pending is not None:
            self._settle()
        self._infos = value

    def _settle(self) -> None:
        """Append the steps kept whole to the lists, row by row (someone reads them)."""
        pending, self._pending, self._pending_steps = self._pending, None, 0
        for block, actions, rewards, infos in pending or ():
            self._observations += list(block)
            if isinstance(actions, np.ndarray):  # an action per row: Python values if scalar
                actions = actions.tolist() if actions.ndim == 1 else list(actions)
            self._actions += actions
            self._rewards += rewards.tolist() if isinstance(rewards, np.ndarray) else rewards
            self._infos += infos if infos is not None else [{} for _ in range(len(block))]

    # --- building (the runner's side) ---------------------------------------------------

    def add_reset(self, observation: object, info: dict[str, Any]) -> None:
        """Record the first observation, from the env's reset."""
        if self._pending is not None:
            self._settle()
        self._observations.append(observation)
        self._infos.append(info)
        self._start_time = perf_counter()

    def add_step(
        self,
        observation: object,
        action: object,
        reward: float,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
    ) -> None:
        """Record one env step: the action taken and what the env returned for it."""
        if self._pending is not None:
            self._settle()
        self._observations.append(observation)
        self._actions.append(action)
        self._rewards.append(reward)
        self._infos.append(info)
        self._return += reward
        self.is_terminated = terminated
        self.is_truncated = truncated
        # The end time only: reading the clock every step would cost this method about 40%
        # (measured); an ongoing episode's duration runs to now (get_duration_s).
        if terminated or truncated:
            self._end_time = perf_counter()

    def add_steps(
        self,
        observations: Sequence[object] | npt.NDArray[Any],
        actions: Sequence[object] | npt.NDArray[Any],
        rewards: Sequence[float] | npt.NDArray[np.floating[Any]],
        infos: list[dict[str, Any]] | None,
        terminated: bool,
        truncated: bool,
    ) -> None:
        """Record several env steps at once, as many ``add_step`` calls would (the flags
        are those of the last): what a columnar sampling loop hands over in one go.

        ``observations`` is a list, or one array whose rows are the steps' observations:
        then it is kept whole, with ``actions`` and ``rewards`` (lists, or arrays of one
        value per row), and the lists get their items only when one is read, so an episode
        nobody reads per step costs no Python object per step. ``infos`` None stands for
        an empty dict per step.
        """
        if isinstance(observations, np.ndarray):
            block = ((observations, actions, rewards, infos),)
            self._pending = block if self._pending is None else self._pending + block
            self._pending_steps += len(rewards)
            if isinstance(rewards, np.ndarray):
                rewards = rewards.tolist()
        else:
            if self._pending is not None:
                self._settle()
            self._observations += observations
            self._infos += infos if infos is not None else [{} for _ in observations]
            self._actions += actions
            self._rewards += rewards
        self._return = _added(rewards, self._return)
        self.is_terminated = terminated
        self.is_truncated = truncated
        if terminated or truncated:
            self._end_time = perf_counter()

    def truncate(self) -> None:
        """Mark the episode truncated now (``Control.end_episode``): its last step is final."""
        self.is_terminated, self.is_truncated = False, True
        self._end_time = perf_counter()

    def chunk(self, start: int) -> Episode:
        """Return a copy of the steps from ``start`` on (``start`` is a step index).

        The chunk's duration runs from the previous ``chunk()`` (or the reset, from step 0)
        to now, or to the episode's end if it ended.
        """
        part = Episode(self.env_index, self.id_, self.t_started + start)
        part.agent_id, part.module_id = self.agent_id, self.module_id
        part.observations = self.observations[start:]
        part.actions = self.actions[start:]
        part.rewards = self.rewards[start:]
        part.infos = self.infos[start:]
        part.is_terminated, part.is_truncated = self.is_terminated, self.is_truncated
        part.custom_data = self.custom_data
        part._return = float(sum(part.rewards))
        now = perf_counter()
        part._start_time = self._start_time if start == 0 else self._handed_at
        part._end_time = self._end_time if self._end_time is not None else now
        self._handed_at = now
        return part

    def cut(self, len_lookback_buffer: int = 0) -> Episode:
        """Return the successor chunk (RLlib's ``cut``): the episode goes on in it.

        The successor has this episode's id, no steps yet (``len`` 0), starts where this
        one is (``t_started == t == self.t``) with this episode's last observation and info
        as its first, and a deep copy of ``custom_data``. Up to ``len_lookback_buffer`` of
        this episode's last steps go along as its lookback buffer, which getters reach with
        ``neg_index_as_lookback=True`` (fewer if this episode has fewer). This episode
        keeps everything; it must not be done.
        """
        if len_lookback_buffer < 0:
            raise ValueError(f"len_lookback_buffer={len_lookback_buffer!r} must be >= 0")
        if self.is_done:
            raise RuntimeError(
                f"cannot cut() episode {self.id_}: it is done (terminated or truncated), so "
                "no successor chunk can continue it"
            )
        size = min(len_lookback_buffer, len(self.actions))
        successor = type(self)(self.env_index, self.id_, self.t)
        successor.agent_id, successor.module_id = self.agent_id, self.module_id
        successor.custom_data = copy.deepcopy(self.custom_data)
        if self.observations:
            successor.observations = [self.observations[-1]]
            successor.infos = [self.infos[-1]]
            successor._start_time = perf_counter()
        if size:
            successor._lookback = Lookback(
                self.observations[-size - 1 : -1],
                self.actions[-size:],
                self.rewards[-size:],
                self.infos[-size - 1 : -1],
            )
        return successor

    def get_state(self) -> dict[str, Any]:
        """Return everything the episode holds, as a dict (RLlib's ``get_state``).

        Plain data and what the env gave: ``events.codec`` encodes it when the observations
        and infos encode. ``Episode.from_state(state)`` rebuilds the episode.
        """
        return single_agent_state(self)

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> Episode:
        """Rebuild an episode from ``get_state()``'s output (ValueError if malformed)."""
        return load_single_agent(cls, state)

    # --- reading (the callbacks' side) --------------------------------------------------

    def __len__(self) -> int:
        """Return the number of env steps (actions) in the episode."""
        return len(self._actions) + self._pending_steps

    @property
    def t(self) -> int:
        """The timestep the episode (or chunk) is at: ``t_started + len(self)`` (RLlib's)."""
        return self.t_started + len(self)

    def env_steps(self) -> int:
        """Return the number of env steps in the episode (or chunk): ``len(self)``."""
        return len(self)

    def agent_steps(self) -> int:
        """Return the number of agent steps: the env steps, in a single-agent episode."""
        return len(self)

    def get_duration_s(self) -> float:
        """Return the seconds from the reset (a chunk: its start) to the final step.

        An ongoing episode's duration runs to now: the callbacks that ask run right after
        a step. 0.0 before the first step, as in RLlib.
        """
        start, end = self._start_time, self._end_time
        if start is None or (end is None and not len(self)):
            return 0.0
        return (perf_counter() if end is None else end) - start

    def get_return(self) -> float:
        """Return the sum of the rewards (not those of the lookback buffer)."""
        return self._return

    @property
    def is_done(self) -> bool:
        """Whether the episode terminated or was truncated."""
        return self.is_terminated or self.is_truncated

    def get_observations(
        self, indices: Indices = None, *, neg_index_as_lookback: bool = False
    ) -> Any:
        """Return observations: all (stacked), one (an int, negative from the end) or a slice.

        With ``neg_index_as_lookback=True`` (RLlib's keyword), negative indices reach back
        before the chunk's first step, into the lookback buffer ``cut()`` gave it: -1 is
        the step just before index 0.
        """
        if indices is None and self._pending is not None and not neg_index_as_lookback:
            # All of them, with steps kept whole: one array out of the arrays, no rows.
            blocks = [block for block, *_ in self._pending]
            return np.concatenate([np.asarray(self._observations), *blocks])
        return self._get("observations", indices, neg_index_as_lookback)

    def get_actions(self, indices: Indices = None, *, neg_index_as_lookback: bool = False) -> Any:
        """Return actions, indexed like ``get_observations``."""
        return self._get("actions", indices, neg_index_as_lookback)

    def get_rewards(self, indices: Indices = None, *, neg_index_as_lookback: bool = False) -> Any:
        """Return rewards, indexed like ``get_observations``."""
        return self._get("rewards", indices, neg_index_as_lookback)

    def get_infos(self, indices: Indices = None, *, neg_index_as_lookback: bool = False) -> Any:
        """Return info dicts (a list, or one dict for an int index)."""
        return self._get("infos", indices, neg_index_as_lookback, stack=False)

    def _get(self, what: str, indices: Indices, lookback: bool, *, stack: bool = True) -> Any:
        items = getattr(self, what)
        if not lookback:
            return gather(items, indices, stack=stack)
        before = getattr(self._lookback, what) if self._lookback is not None else []
        return gather_with_lookback(before, items, indices, stack=stack)

    def get_extra_model_outputs(
        self,
        key: str,
        indices: Indices = None,
        *,
        neg_index_as_lookback: bool = False,
        fill: Any = None,
    ) -> Any:
        """Return the module's extra outputs under ``key`` (RLlib's signature).

        hookbus's modules return actions only, so an episode keeps no extra model outputs:
        any ``key`` raises the ``KeyError`` RLlib's lookup raises for a key its episode
        does not hold.
        """
        raise KeyError(
            f"{key!r}: hookbus episodes keep no extra model outputs (the modules return "
            f"actions only); read actions with get_actions()"
        )

    def to_numpy(self) -> Episode:
        """Return this episode, as RLlib's ``to_numpy()`` does once its data are arrays.

        hookbus keeps the lists as they are (steps may still be added): ``get_observations()``,
        ``get_actions()`` and ``get_rewards()`` already return numpy arrays for all steps,
        a slice or a list of indices; infos stay a list of dicts, as in RLlib.
        """
        return self

    def set_rewards(self, rewards: npt.ArrayLike, at_indices: Indices = None) -> None:
        """Replace rewards (all, or those at ``at_indices``), e.g. in on_postprocess_trajectory."""
        values = np.asarray(rewards, dtype=float).ravel().tolist()
        if at_indices is None:
            positions = list(range(len(self.rewards)))
        elif isinstance(at_indices, int):
            positions = [at_indices]
        elif isinstance(at_indices, slice):
            positions = list(range(len(self.rewards)))[at_indices]
        else:
            positions = list(at_indices)
        if len(values) != len(positions):
            raise ValueError(
                f"set_rewards got {len(values)} rewards for {len(positions)} positions"
            )
        for position, value in zip(positions, values, strict=True):
            self.rewards[position] = value
        self._return = float(sum(self.rewards))

    def __repr__(self) -> str:
        state = (
            "terminated" if self.is_terminated else "truncated" if self.is_truncated else "ongoing"
        )
        return (
            f"Episode(id_={self.id_!r}, env_index={self.env_index}, len={len(self)}, "
            f"return={self._return:g}, {state})"
        )


SingleAgentEpisode = Episode
"""RLlib's name for a single-agent episode (``MultiAgentEpisode.agent_episodes`` holds them)."""
