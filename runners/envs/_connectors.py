"""The env-to-module pipeline, the part of RLlib's connectors users touch.

``env_runners(env_to_module_connector=lambda env: ...)`` returns one piece or a list of
them; each piece turns one observation into another (``preprocess``) and says what space
comes out (``recompute_output_observation_space``), as RLlib's
``SingleAgentObservationPreprocessor`` (``rllib/connectors/env_to_module/
observation_preprocessor.py``). :class:`FlattenObservations` is RLlib's piece of that name.

Unlike RLlib, the pipeline does not write its output back into the episodes: episodes,
hooks, recordings and the replay buffer keep the env's own observations, and learners run
the same pipeline over an episode's observations when they train (``EnvToModule.stack``).
So a piece must be a function of the observation (and its episode), not of what it saw
before.
"""

from __future__ import annotations

import abc
import inspect
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np
from gymnasium.spaces import Dict
from numpy.typing import NDArray

from hookbus.kernel import ConfigError

from .._types import AgentID, Batched
from ._spaces import Flattener, check_observation_space, is_flat_box, row_splitter

if TYPE_CHECKING:
    from ..episodes import Episode
    from ._multi_agent_env import MultiAgentEnv

    AnyEnv = gym.vector.VectorEnv[Any, Any, Any] | MultiAgentEnv
    """What a connector function is handed: the runner's vector env or multi-agent env."""

Connector = Callable[..., object]
"""The ``env_to_module_connector`` setting: ``fn(env, spaces, device)`` (or ``fn(env)``)
returning a piece, a list of pieces, or None."""

__all__ = (
    "EnvToModule",
    "FlattenObservations",
    "ObservationPreprocessor",
    "SingleAgentObservationPreprocessor",
    "connector_pieces",
    "env_to_module_pipeline",
)


class SingleAgentObservationPreprocessor(abc.ABC):
    """Turn one observation into what the module (or the next piece) takes.

    Subclass it and implement :meth:`preprocess`; override
    :meth:`recompute_output_observation_space` when the space changes. The pipeline sets
    ``input_observation_space`` and ``observation_space`` (the output) before any call.
    """

    def __init__(
        self,
        input_observation_space: gym.Space[Any] | None = None,
        input_action_space: gym.Space[Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Keep the input spaces, if given (the pipeline gives them otherwise)."""
        self.input_observation_space: gym.Space[Any] | None = None
        self.input_action_space: gym.Space[Any] | None = input_action_space
        self.observation_space: gym.Space[Any] | None = None
        if input_observation_space is not None:
            self.bind(input_observation_space, input_action_space)

    def bind(
        self, input_observation_space: gym.Space[Any], input_action_space: gym.Space[Any] | None
    ) -> gym.Space[Any]:
        """Set the input spaces, compute and return the output observation space."""
        self.input_observation_space = input_observation_space
        self.input_action_space = input_action_space
        self.observation_space = self.recompute_output_observation_space(
            input_observation_space, input_action_space
        )
        return self.observation_space

    def recompute_output_observation_space(
        self,
        input_observation_space: gym.Space[Any],
        input_action_space: gym.Space[Any] | None,
    ) -> gym.Space[Any]:
        """Return the space of what :meth:`preprocess` returns (default: the input's)."""
        return input_observation_space

    @abc.abstractmethod
    def preprocess(self, observation: Any, episode: Episode | None = None) -> Any:
        """Return the new observation for ``observation`` (of ``episode``, if known).

        ``episode`` is None where no episode is at hand (``compute_single_action``).
        RLlib 2.40's one-argument form ``preprocess(self, observation)`` works too.
        """


ObservationPreprocessor = SingleAgentObservationPreprocessor
"""RLlib's older name of :class:`SingleAgentObservationPreprocessor`."""


class FlattenObservations(SingleAgentObservationPreprocessor):
    """Flatten every observation into one float32 row (RLlib's piece of this name).

    Box (any shape) flattened, Discrete and MultiDiscrete one-hot, Dict (keys sorted) and
    Tuple concatenated, nested, in RLlib's order (docs/environments.md).

    ``multi_agent=True`` (a multi-agent run's form, as in RLlib) takes the env's Dict of
    agent id to observation space and flattens each agent's observations by its own
    space; ``agent_ids`` limits that to some agents (the others pass through as they are).
    """

    def __init__(
        self,
        input_observation_space: gym.Space[Any] | None = None,
        input_action_space: gym.Space[Any] | None = None,
        *,
        multi_agent: bool = False,
        agent_ids: Collection[Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Take RLlib's arguments; anything else is a ConfigError naming it."""
        _check_flatten_arguments(multi_agent, agent_ids, kwargs)
        self.multi_agent = multi_agent
        self.agent_ids = None if agent_ids is None else list(agent_ids)
        self._flattener: Flattener | None = None
        self._by_agent: dict[Any, Flattener] = {}
        super().__init__(input_observation_space, input_action_space)

    def recompute_output_observation_space(
        self,
        input_observation_space: gym.Space[Any],
        input_action_space: gym.Space[Any] | None,
    ) -> gym.Space[Any]:
        """Return the flattened space: a 1-D float32 Box (multi-agent: a Dict of them)."""
        if not self.multi_agent:
            self._flattener = Flattener(input_observation_space)
            return self._flattener.observation_space
        if not isinstance(input_observation_space, Dict):
            raise ConfigError(
                f"FlattenObservations(multi_agent=True) takes a Dict space keyed by agent id, "
                f"got {input_observation_space!r}; allowed: FlattenObservations() in a "
                f"single-agent run"
            )
        agents = input_observation_space.spaces
        unknown = [a for a in self.agent_ids or () if a not in agents]
        if unknown:
            raise ConfigError(
                f"FlattenObservations(agent_ids={self.agent_ids!r}): {unknown!r} not among "
                f"the env's agents {list(agents)!r}; allowed: a collection of those, or None"
            )
        chosen = list(agents) if self.agent_ids is None else self.agent_ids
        self._by_agent = {}
        for agent_id in chosen:
            try:
                self._by_agent[agent_id] = Flattener(agents[agent_id])
            except ConfigError as exc:
                raise ConfigError(f"agent {agent_id!r}: {exc}") from None
        spaces = {
            a: self._by_agent[a].observation_space if a in self._by_agent else space
            for a, space in agents.items()
        }
        return Dict(spaces)

    def preprocess(self, observation: Any, episode: Episode | None = None) -> Any:
        """Return ``observation`` as one float32 row (multi-agent: by the space of
        ``episode.agent_id``; an agent not in ``agent_ids`` keeps its observation)."""
        if not self.multi_agent:
            return self._bound.one(observation)
        flattener = self._by_agent.get(getattr(episode, "agent_id", None))
        return observation if flattener is None else flattener.one(observation)

    def agent_flattener(self, agent_id: AgentID) -> Flattener | None:
        """Return how ``agent_id``'s observations are flattened (multi-agent), or None:
        it passes through."""
        return self._by_agent.get(agent_id)

    @property
    def _bound(self) -> Flattener:
        if self._flattener is None:
            raise ConfigError("FlattenObservations has no input space yet: add it to a pipeline")
        return self._flattener


def _check_flatten_arguments(
    multi_agent: object, agent_ids: object, kwargs: dict[str, Any]
) -> None:
    allowed = (
        "allowed: FlattenObservations() in a single-agent run, "
        "FlattenObservations(multi_agent=True, agent_ids=None or a list of agent ids) in a "
        "multi-agent one"
    )
    if kwargs:
        raise ConfigError(f"FlattenObservations got unknown keywords {sorted(kwargs)!r}; {allowed}")
    if not isinstance(multi_agent, bool):
        raise ConfigError(f"FlattenObservations(multi_agent={multi_agent!r}): {allowed}")
    if agent_ids is None:
        return
    if not multi_agent:
        raise ConfigError(
            f"FlattenObservations(agent_ids={agent_ids!r}) without multi_agent=True: {allowed}"
        )
    if isinstance(agent_ids, str | bytes) or not isinstance(agent_ids, Collection):
        raise ConfigError(f"FlattenObservations(agent_ids={agent_ids!r}): {allowed}")


class EnvToModule:
    """Turn an env's observations into the module's: the pieces in order, then float32 rows.

    A pipeline whose last output is not a 1-D Box is flattened at its end (the module is an
    MLP), as when no pipeline is set.
    """

    def __init__(
        self,
        pieces: Sequence[SingleAgentObservationPreprocessor],
        observation_space: gym.Space[Any],
        action_space: gym.Space[Any] | None,
    ) -> None:
        """Bind ``pieces`` one after the other, from the env's observation space."""
        space = observation_space
        bound: list[tuple[Callable[..., Any], bool]] = []
        for piece in pieces:
            if isinstance(piece, FlattenObservations) and piece.multi_agent:
                raise ConfigError(
                    "FlattenObservations(multi_agent=True) is for multi-agent envs, and this "
                    "env is single-agent; allowed: FlattenObservations()"
                )
            space = piece.bind(space, action_space)
            bound.append((piece.preprocess, _takes_episode(piece.preprocess)))
        if not is_flat_box(space):
            check_observation_space(space)
            flatten = FlattenObservations(space, action_space)
            pieces = [*pieces, flatten]
            bound.append((flatten.preprocess, False))
            space = flatten._bound.observation_space
        self.pieces = list(pieces)
        self.observation_space: gym.Space[Any] = space
        """What the module takes: a Box."""
        self._bound = bound
        self.rows_of = row_splitter(observation_space)
        """How a vector env's batched observations become one per sub-env."""
        # The default pipeline (only a flatten): straight from the batched arrays.
        only = self.pieces[0] if len(self.pieces) == 1 else None
        self._flattener = only._bound if isinstance(only, FlattenObservations) else None

    def __call__(
        self, batched: Batched, episodes: Sequence[Episode | None] | None = None
    ) -> NDArray[Any]:
        """Return the module's rows [B, ...] for a vector env's batched observations."""
        if self._flattener is not None:
            return self._flattener.batch(batched)
        rows = self.rows_of(batched)
        if episodes is None:
            episodes = [None] * len(rows)
        return self._rows([self.apply(o, e) for o, e in zip(rows, episodes, strict=True)])

    def apply(self, observation: Any, episode: Episode | None = None) -> Any:
        """Return one observation as the module takes it."""
        for preprocess, with_episode in self._bound:
            observation = (
                preprocess(observation, episode) if with_episode else preprocess(observation)
            )
        return observation

    def stack(self, observations: Sequence[Any], episode: Episode | None = None) -> NDArray[Any]:
        """Return the module's rows [N, ...] for ``observations`` (an episode's)."""
        if self._flattener is not None:
            return self._flattener.stack(observations)
        return self._rows([self.apply(o, episode) for o in observations])

    def _rows(self, rows: list[Any]) -> NDArray[Any]:
        if not rows:
            return np.zeros((0, *(self.observation_space.shape or ())), dtype=np.float32)
        return np.asarray(rows, dtype=np.float32)


def _takes_episode(preprocess: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(preprocess).parameters.values()
    except (TypeError, ValueError):  # a builtin: call it with the observation only
        return False
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(p.kind in positional for p in params) >= 2 or any(
        p.kind is inspect.Parameter.VAR_POSITIONAL for p in params
    )


def env_to_module_pipeline(
    connector: Connector | None, env: gym.vector.VectorEnv[Any, Any, Any]
) -> EnvToModule | None:
    """Return the pipeline for ``env`` (a vector env), or None: a Box needs none.

    ``connector`` is the ``env_to_module_connector`` setting: None (the default pipeline:
    flatten what is not a Box), or ``fn(env, spaces, device)`` (or RLlib's older
    ``fn(env)``) returning a piece, a list of pieces, or None.
    """
    obs_space, act_space = env.single_observation_space, env.single_action_space
    spaces = {
        "__env__": (env.observation_space, env.action_space),
        "__env_single__": (obs_space, act_space),
    }
    pieces = connector_pieces(connector, env, spaces)
    if not pieces:
        if is_flat_box(obs_space):
            return None
        check_observation_space(obs_space)
    return EnvToModule(pieces, obs_space, act_space)


def connector_pieces(
    connector: Connector | None, env: AnyEnv, spaces: dict[Any, Any]
) -> list[SingleAgentObservationPreprocessor]:
    """Return the pieces ``connector`` makes (none when it is None).

    RLlib calls ``fn(env, spaces, device)`` and falls back on ``fn(env)``; here the
    function's signature decides, so that a TypeError raised inside it is not taken for a
    wrong signature. ``device`` is None (no torch).
    """
    if connector is None:
        return []
    made = connector(*(env, spaces, None)[: _positional_arguments(connector)])
    return _pieces(made)


def _positional_arguments(fn: Callable[..., Any]) -> int:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # no signature to read: RLlib's older form
        return 1
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return 3
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return min(3, sum(p.kind in positional for p in params))


def _pieces(made: object) -> list[SingleAgentObservationPreprocessor]:
    items = list(made) if isinstance(made, (list, tuple)) else [] if made is None else [made]
    pieces = []
    for item in items:
        if not isinstance(item, SingleAgentObservationPreprocessor):
            raise ConfigError(
                f"env_to_module_connector returned {item!r}: allowed are FlattenObservations(), "
                "your own SingleAgentObservationPreprocessor subclass, a list of them, or None"
            )
        pieces.append(item)
    return pieces
