"""Several modules and their learners, one per module (policy) id: multi-agent training.

RLlib keeps a ``MultiRLModule`` (modules by id) in its ``MultiAgentEnvRunner`` and a learner
per module on the Learner side; here :class:`MultiAgentModule` is what the EnvRunners hold
and :class:`MultiAgentLearner` keeps one single-agent learner per module id, fed the agent
episodes that its module acted in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import gymnasium as gym

from hookbus.kernel import ConfigError

from .._rl_module import RLModule
from ..algorithm import Learner, Spaces, check_structure
from ..config import DEFAULT_MODULE_ID
from ..episodes import Episode, MultiAgentEpisode

__all__ = ("ActingLearner", "MultiAgentLearner", "MultiAgentModule")

Batch = Sequence[Episode]
"""What one module's learner trains on: the agent episodes its module acted in."""

MakeLearner = Callable[[str, gym.Space[Any], gym.Space[Any], int], Learner[Batch]]
"""``make(module_id, observation_space, action_space, seed) -> learner``."""

TrainsModule = Callable[[str, Batch | None], bool]
"""``trains(module_id, batch) -> bool``: whether to update ``module_id`` on ``batch``."""


class MultiAgentModule(Mapping[str, RLModule]):
    """Hold modules by module id: what EnvRunners act with (RLlib's ``MultiRLModule``).

    A mapping (``module["p0"].forward_exploration(obs, rng)``) whose state is nested by
    module id; ``add_module`` and ``remove_module`` change it (``Algorithm.add_module``).
    It pickles when its modules do (it is sent to worker processes).
    """

    def __init__(self, modules: Mapping[str, RLModule]) -> None:
        """Keep ``modules`` (module id to module), in their order."""
        self._modules = dict(modules)

    def __getitem__(self, module_id: str) -> RLModule:
        """Return the module ``module_id`` (KeyError naming the known ids if there is none)."""
        try:
            return self._modules[module_id]
        except KeyError:
            raise KeyError(f"no module {module_id!r}; modules: {_names(self._modules)}") from None

    def __iter__(self) -> Iterator[str]:
        """Iterate over the module ids."""
        return iter(self._modules)

    def __len__(self) -> int:
        """Return the number of modules."""
        return len(self._modules)

    def get_state(self) -> dict[str, Any]:
        """Return every module's state (``module.get_state()``), by module id."""
        return {module_id: module.get_state() for module_id, module in self._modules.items()}

    def set_state(self, state: Mapping[str, dict[str, Any]]) -> None:
        """Load the state of every module id in ``state`` (others keep theirs).

        An id that is not a module is a ValueError, raised before anything loads.
        """
        _check_known(state, self._modules)
        for module_id, module_state in state.items():
            self._modules[module_id].set_state(module_state)

    def add_module(self, module_id: str, module: RLModule, *, override: bool = False) -> None:
        """Add ``module`` as ``module_id`` (RLlib's; ValueError if the id is taken, unless
        ``override``)."""
        if module_id in self._modules and not override:
            raise ValueError(
                f"module {module_id!r} already exists; modules: {_names(self._modules)}"
            )
        self._modules[module_id] = module

    def remove_module(self, module_id: str, *, raise_err_if_not_found: bool = True) -> None:
        """Remove module ``module_id`` (RLlib's; KeyError naming the modules if absent)."""
        if module_id not in self._modules:
            if raise_err_if_not_found:
                self[module_id]  # raises, naming the modules
            return
        del self._modules[module_id]

    def __repr__(self) -> str:
        return f"MultiAgentModule({_names(self._modules)})"


class ActingLearner:
    """Hold a module that acts and is never trained: a module class of the user's own
    (``RLModuleSpec(module_class=...)``), such as ``RandomRLModule``.

    Its state is the module's; an update is a ConfigError naming the module, since
    hookbus's learners train only their own modules.
    """

    acts_only = True
    """Never trained: checkpoints keep the module's state, not how to build it."""

    def __init__(self, module_id: str, module: RLModule) -> None:
        self.module_id = module_id
        self.module = module

    def update(self, batch: Any, /) -> Mapping[str, float]:
        """Refuse: this module is not trained here."""
        raise ConfigError(
            f"module {self.module_id!r} ({type(self.module).__qualname__}) acts and is never "
            f"trained (hookbus's learners train their own modules): leave it out of "
            f"policies_to_train"
        )

    def get_state(self) -> dict[str, Any]:
        """Return the module's state."""
        return self.module.get_state()

    def set_state(self, state: dict[str, Any], /) -> None:
        """Load the module's state."""
        self.module.set_state(state)

    def __repr__(self) -> str:
        return f"ActingLearner({self.module_id!r}, {self.module!r})"


class MultiAgentLearner:
    """Train one single-agent learner per module id, each on its module's agent episodes.

    ``make(module_id, observation_space, action_space, seed)`` builds each learner from
    ``spaces`` (module id to ``(observation_space, action_space)``); the k-th module, in
    the order of ``spaces``, gets ``seed + k``, so no two modules start with the same
    weights. ``trains(module_id, batch)`` says whether an update trains a module (default:
    every module); modules it declines keep their weights and act as they are.
    """

    def __init__(
        self,
        spaces: Spaces,
        make: MakeLearner,
        *,
        seed: int = 0,
        trains: TrainsModule | None = None,
    ) -> None:
        """Build a learner per module id in ``spaces`` (see the class docstring)."""
        if not spaces:
            raise ValueError("a MultiAgentLearner needs at least one module, got no spaces")
        self.learners: dict[str, Learner[Batch]] = {
            module_id: make(module_id, obs_space, act_space, seed + k)
            for k, (module_id, (obs_space, act_space)) in enumerate(spaces.items())
        }
        """Module id to that module's learner."""
        self.module = MultiAgentModule(
            {module_id: learner.module for module_id, learner in self.learners.items()}
        )
        """The learners' modules (live: updates change them), for the EnvRunners."""
        self._trains = trains

    def add_module(self, module_id: str, learner: Learner[Batch]) -> None:
        """Train (or hold, an ``ActingLearner``) a new module ``module_id`` from now on."""
        if module_id in self.learners:
            raise ValueError(
                f"module {module_id!r} already exists; modules: {_names(self.learners)}"
            )
        self.module.add_module(module_id, learner.module)
        self.learners[module_id] = learner

    def remove_module(self, module_id: str) -> Learner[Batch]:
        """Stop training module ``module_id`` and forget it; return its learner."""
        self.module.remove_module(module_id)
        return self.learners.pop(module_id)

    def trains(self, module_id: str, batch: Batch | None = None) -> bool:
        """Tell whether updates train ``module_id`` on ``batch``."""
        return True if self._trains is None else bool(self._trains(module_id, batch))

    def batches(self, episodes: Sequence[Episode | MultiAgentEpisode]) -> dict[str, list[Episode]]:
        """Group the agent episodes of ``episodes`` by the module that acted in them.

        ``episodes`` holds ``MultiAgentEpisode`` chunks (their agent episodes are taken) or
        single-agent ``Episode``s (module id None means ``default_policy``). Zero-length
        agent episodes are dropped; modules in the result follow the learners' order. An
        agent episode of a module this learner lacks is a ValueError naming it.
        """
        grouped: dict[str, list[Episode]] = {}
        for episode in episodes:
            parts = (
                episode.agent_episodes.values()
                if isinstance(episode, MultiAgentEpisode)
                else (episode,)
            )
            for part in parts:
                if len(part):
                    grouped.setdefault(part.module_id or DEFAULT_MODULE_ID, []).append(part)
        _check_known(grouped, self.learners, what="an episode of module")
        return {mid: grouped[mid] for mid in self.learners if mid in grouped}

    def train_batches(
        self, episodes: Sequence[Episode | MultiAgentEpisode]
    ) -> dict[str, list[Episode]]:
        """Return :meth:`batches` of the modules that :meth:`trains` on them."""
        return {
            module_id: batch
            for module_id, batch in self.batches(episodes).items()
            if self.trains(module_id, batch)
        }

    def update(
        self, episodes: Sequence[Episode | MultiAgentEpisode]
    ) -> dict[str, Mapping[str, float]]:
        """Update every module to train that has data; return each one's stats, by id."""
        return {
            module_id: self.learners[module_id].update(batch)
            for module_id, batch in self.train_batches(episodes).items()
        }

    def get_state(self) -> dict[str, Any]:
        """Return every learner's state, by module id."""
        return {module_id: learner.get_state() for module_id, learner in self.learners.items()}

    def set_state(self, state: Mapping[str, dict[str, Any]]) -> None:
        """Load the learners' states in ``state`` (by module id), all or nothing.

        Every module's state is checked against its learner's current one (keys, array
        shapes and dtypes) before any loads; if a load still raises, the learners loaded so
        far, the failing one included, get their previous state back.
        """
        _check_known(state, self.learners)
        before = {module_id: self.learners[module_id].get_state() for module_id in state}
        for module_id, saved in state.items():
            check_structure(saved, before[module_id], f"learner state of module {module_id!r}")
        loaded: list[str] = []
        try:
            for module_id, saved in state.items():
                loaded.append(module_id)
                self.learners[module_id].set_state(saved)
        except BaseException:
            for module_id in reversed(loaded):
                self.learners[module_id].set_state(before[module_id])
            raise

    def __repr__(self) -> str:
        return f"MultiAgentLearner({_names(self.learners)})"


def _names(known: Mapping[str, Any]) -> str:
    return ", ".join(map(repr, known)) or "none"


def _check_known(
    given: Mapping[str, Any], known: Mapping[str, Any], *, what: str = "a state for module"
) -> None:
    unknown = [module_id for module_id in given if module_id not in known]
    if unknown:
        raise ValueError(
            f"got {what} {unknown[0]!r}, which is not a module here; modules: {_names(known)}"
        )


if TYPE_CHECKING:  # mypy checks the fit to the Protocols
    from .._rl_module import MultiRLModule
    from ..algorithm import MultiLearner

    _module: type[MultiRLModule] = MultiAgentModule
    _learner: type[MultiLearner[Sequence[Episode | MultiAgentEpisode]]] = MultiAgentLearner
