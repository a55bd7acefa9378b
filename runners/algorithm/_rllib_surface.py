"""RLlib's accessors on the Algorithm: modules and weights, runner restores, the default
config, and the names RLlib 2.40 still accepts as deprecated."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hookbus.kernel import ConfigError

from .._deprecation import warn_deprecated
from ..config import DEFAULT_MODULE_ID, AlgorithmConfig
from ._learner import MultiLearner

if TYPE_CHECKING:
    from ..fleet import EnvRunnerGroup
    from ._facade import SyncFacade
    from ._learner import AnyLearner
    from ._lifecycle import Lifecycle

__all__ = ("RLlibSurface",)


class RLlibSurface:
    """RLlib's Algorithm accessors (a base of ``Algorithm``; it uses the names below)."""

    if TYPE_CHECKING:  # what the Algorithm provides
        _lifecycle: Lifecycle
        _sync: SyncFacade

        @property
        def learner(self) -> AnyLearner: ...
        @property
        def env_runner_group(self) -> EnvRunnerGroup: ...
        @property
        def eval_env_runner_group(self) -> EnvRunnerGroup | None: ...

    @classmethod
    def get_default_config(cls) -> AlgorithmConfig[Any]:
        """Return a new config of this algorithm (RLlib's classmethod): ``PPO`` gives a
        ``PPOConfig()``.

        The config class is the one that names this class as its ``algo_class``, or else
        the nearest base's (a subclass without a config of its own, Tune's wrappers
        included, gets its base's, as RLlib's per-class overrides are inherited).
        """
        configs = _subclasses(AlgorithmConfig)
        for klass in cls.__mro__:
            for config_class in configs:
                if vars(config_class).get("algo_class") is klass:
                    config: AlgorithmConfig[Any] = config_class()
                    return config
        raise ConfigError(
            f"no AlgorithmConfig subclass names {cls.__name__} or a base of it as its "
            f"algo_class; define one (class MyConfig(AlgorithmConfig[{cls.__name__}]): "
            f"algo_class = {cls.__name__})"
        )

    def get_module(self, module_id: str = DEFAULT_MODULE_ID) -> Any:
        """Return the learner's module ``module_id`` (RLlib's; the runners act with it)."""
        module = self.learner.module
        if isinstance(self.learner, MultiLearner):
            return module[module_id]  # type: ignore[index]
        if module_id != DEFAULT_MODULE_ID:
            raise KeyError(
                f"get_module({module_id!r}): this single-agent run has one module, "
                f"{DEFAULT_MODULE_ID!r}"
            )
        return module

    def get_weights(self) -> dict[str, Any]:
        """Return the learner's weights by module id (RLlib's new-stack form)."""
        state: dict[str, Any] = self.learner.module.get_state()
        if isinstance(self.learner, MultiLearner):
            return state
        return {DEFAULT_MODULE_ID: state}

    def set_weights(self, weights: dict[str, Any]) -> None:
        """Load weights by module id (as ``get_weights()`` returns them) into the learner;
        the runners act with them from the next iteration (in-process ones at once)."""
        if isinstance(self.learner, MultiLearner):
            current = self.learner.module.get_state()
            self.learner.module.set_state({**current, **weights})
            return
        unknown = set(weights) - {DEFAULT_MODULE_ID}
        if unknown:
            raise KeyError(
                f"set_weights() got module ids {sorted(unknown)!r}; this single-agent run "
                f"has one module, {DEFAULT_MODULE_ID!r}"
            )
        if DEFAULT_MODULE_ID in weights:
            self.learner.module.set_state(weights[DEFAULT_MODULE_ID])

    def restore_env_runners(self, env_runner_group: EnvRunnerGroup) -> list[int]:
        """Restart the failed runners of ``env_runner_group`` that the fault-tolerance
        settings allow, with the learner's weights; publish ``on_env_runners_recreated``;
        return their worker indices (RLlib's method; sync twin of ``arestore_env_runners``)."""
        return self._sync.run(
            self._lifecycle,
            "restore_env_runners",
            "arestore_env_runners",
            self.arestore_env_runners,
            env_runner_group,
        )

    async def arestore_env_runners(self, env_runner_group: EnvRunnerGroup) -> list[int]:
        """Async twin of ``restore_env_runners()``."""
        weights = self.learner.module.get_state()
        return await env_runner_group.restore_and_announce(weights)

    @property
    def workers(self) -> EnvRunnerGroup:
        """Deprecated in RLlib: ``env_runner_group``."""
        warn_deprecated("Algorithm.workers", "Algorithm.env_runner_group", stacklevel=3)
        return self.env_runner_group

    @property
    def evaluation_workers(self) -> EnvRunnerGroup | None:
        """Deprecated in RLlib: ``eval_env_runner_group``."""
        warn_deprecated("Algorithm.evaluation_workers", "Algorithm.eval_env_runner_group")
        return self.eval_env_runner_group


def _subclasses(cls: type[Any]) -> list[type[Any]]:
    """Return every subclass of ``cls``, depth first."""
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found
