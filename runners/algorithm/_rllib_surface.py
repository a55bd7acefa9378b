"""RLlib's accessors on the Algorithm, as functions of what they read: the default config of
an algorithm class, and the learner's modules and weights by module id."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hookbus.kernel import ConfigError

from ..config import DEFAULT_MODULE_ID, AlgorithmConfig
from ._learner import MultiLearner

if TYPE_CHECKING:
    from ._learner import AnyLearner

__all__ = ("default_config", "get_module", "get_weights", "set_weights")


def default_config(algorithm_class: type[Any]) -> AlgorithmConfig[Any]:
    """Return a new config of ``algorithm_class`` (``Algorithm.get_default_config``).

    The config class is the one that names the class as its ``algo_class``, or else the
    nearest base's (a subclass without a config of its own, Tune's wrappers included, gets
    its base's, as RLlib's per-class overrides are inherited).
    """
    # Only a class that sets algo_class itself counts; reading it may load the algorithm's
    # module (PPOConfig's resolves on access, _tune.py).
    configs = [c for c in _subclasses(AlgorithmConfig) if "algo_class" in vars(c)]
    for klass in algorithm_class.__mro__:
        for config_class in configs:
            if config_class.algo_class is klass:
                config: AlgorithmConfig[Any] = config_class()
                return config
    name = algorithm_class.__name__
    raise ConfigError(
        f"no AlgorithmConfig subclass names {name} or a base of it as its algo_class; "
        f"define one (class MyConfig(AlgorithmConfig[{name}]): algo_class = {name})"
    )


def get_module(learner: AnyLearner, module_id: str) -> Any:
    """Return the learner's module ``module_id`` (``Algorithm.get_module``), as RLlib 2.60:
    a single-agent run's one module whatever the id, None for an id a multi-agent run
    does not have."""
    module = learner.module
    if isinstance(learner, MultiLearner):
        try:
            return module[module_id]  # type: ignore[index]
        except KeyError:
            return None
    return module


def get_weights(learner: AnyLearner) -> dict[str, Any]:
    """Return the learner's weights by module id (``Algorithm.get_weights``)."""
    state: dict[str, Any] = learner.module.get_state()
    if isinstance(learner, MultiLearner):
        return state
    return {DEFAULT_MODULE_ID: state}


def set_weights(learner: AnyLearner, weights: dict[str, Any]) -> None:
    """Load weights by module id into the learner (``Algorithm.set_weights``)."""
    if isinstance(learner, MultiLearner):
        current = learner.module.get_state()
        learner.module.set_state({**current, **weights})
        return
    unknown = set(weights) - {DEFAULT_MODULE_ID}
    if unknown:
        raise KeyError(
            f"set_weights() got module ids {sorted(unknown)!r}; this single-agent run "
            f"has one module, {DEFAULT_MODULE_ID!r}"
        )
    if DEFAULT_MODULE_ID in weights:
        learner.module.set_state(weights[DEFAULT_MODULE_ID])


def _subclasses(cls: type[Any]) -> list[type[Any]]:
    """Return every subclass of ``cls``, depth first."""
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found
