"""Ray Tune: every Algorithm is a Tune Trainable once Ray Tune is imported (``hookbus[tune]``).

RLlib's Algorithm subclasses Tune's ``Trainable``, so ``tune.Tuner(PPO, param_space=config)``
works. hookbus must not import Ray for users who never touch it (and worker processes import
hookbus too), so the Algorithm's root, ``TuneTrainable``, starts as a plain class and gets
Tune's ``Trainable`` as its base when ``ray.tune`` is imported: at once if it already is, or
by an import hook the moment it is (``watch_for_tune``). Tune tells trainable classes by
``issubclass(cls, Trainable)``, nothing weaker, hence the rebase. The same moment registers
``AlgorithmConfig`` with Tune's interface for config objects (``ray.tune.tune._Config``:
Tune calls its ``to_dict()``), so the config itself is a valid ``param_space``.

Tune builds a trial's Algorithm as ``PPO(config=<resolved dict>, storage=...)``; only such
an instance runs Tune's side of ``train()``, ``save()``, ``restore()`` and ``stop()``
(``_tune_trial``). Everywhere else those names keep hookbus's meaning.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from hookbus.kernel import ConfigError

from ..config import AlgorithmConfig

__all__ = ("TuneTrainable", "require_tune", "watch_for_tune")

_TUNE = "ray.tune"
_EXTRA = "pip install 'hookbus[tune]'"


class _Root:
    """A plain base for ``TuneTrainable``: CPython lets ``__bases__`` change from it."""


class TuneTrainable(_Root):
    """Tune's Trainable API over the Algorithm (Tune's ``Trainable`` its base once imported).

    Tune calls ``setup`` (through ``Trainable.__init__``), then ``step`` per ``train()``,
    ``save_checkpoint`` / ``load_checkpoint`` with a directory, ``reset_config`` when it
    reuses the actor, ``cleanup`` at the end; ``default_resource_request`` sizes the trial.
    """

    _tune_trial = False
    """True on an Algorithm that Tune built for a trial (class default: False)."""

    def _start_trial(self, params: dict[str, Any], storage: Any) -> None:
        """Initialise as Tune's trainable: Tune's ``Trainable.__init__`` calls ``setup``."""
        trainable = require_tune().Trainable
        self._tune_trial = True
        trainable.__init__(self, config=params, storage=storage)

    def _tune_call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call Tune's ``Trainable.<name>`` on this trial (hookbus's method shadows it)."""
        return getattr(require_tune().Trainable, name)(self, *args, **kwargs)

    # --- Tune's Trainable API (called by Tune on a trial's Algorithm) -----------------------

    def setup(self, config: dict[str, Any]) -> None:
        """Build the Algorithm from the trial's resolved settings (Tune's ``setup``).

        ``config`` is ``AlgorithmConfig.to_dict()``'s form or a flat dict of settings,
        search spaces resolved; each value is checked now, as ``validate()`` checks it.
        With a run directory configured (``reporting(logdir=...)``), hookbus's writers
        write into ``<trial dir>/hookbus`` instead, one per trial (a trial restarted from
        scratch starts its files afresh there).
        """
        algorithm = _host(self)
        self._tune_params = config
        built = algorithm.config_for(config)
        if built.logdir is not None:
            built.reporting(logdir=str(self._trial_dir() / "hookbus"))
        # The trial's folder is the trial's alone: a trial Tune restarts from scratch finds
        # its own earlier attempt there, not another run.
        algorithm._init_algorithm(built, None, own_logdir=True)

    def _trial_dir(self) -> Path:
        """The trial's directory: in Tune's storage if local, else its working directory
        (which Tune uploads with ``SyncConfig(sync_artifacts=True)``)."""
        storage = getattr(self, "_storage", None)
        filesystem = getattr(storage, "storage_filesystem", None)
        if storage is not None and getattr(filesystem, "type_name", "") == "local":
            return Path(storage.trial_fs_path)
        return Path(_host(self).logdir)

    def step(self) -> dict[str, Any]:
        """Run one training iteration (Tune's ``step``: ``train()`` calls it)."""
        algorithm = _host(self)
        result: dict[str, Any] = algorithm._sync.run(
            algorithm._lifecycle, "train", "atrain", algorithm.atrain
        )
        return result

    def save_checkpoint(self, checkpoint_dir: str) -> None:
        """Write hookbus's checkpoint into Tune's ``checkpoint_dir``."""
        _host(self).save_to_path(checkpoint_dir)

    def load_checkpoint(self, checkpoint: Any) -> None:
        """Load hookbus's checkpoint from the directory Tune gives."""
        _host(self).restore_from_path(checkpoint)

    def cleanup(self) -> None:
        """Stop the Algorithm: its runners, worker processes and event loop."""
        _host(self)._stop_algorithm()

    def reset_config(self, new_config: dict[str, Any]) -> bool:
        """Start afresh with ``new_config`` in this actor (Tune's ``reuse_actors``)."""
        self.cleanup()
        self.setup(new_config)
        return True

    def get_auto_filled_metrics(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Tune's auto-filled result keys, ``config`` being the trial's settings dict."""
        metrics: dict[str, Any] = self._tune_call("get_auto_filled_metrics", *args, **kwargs)
        metrics["config"] = getattr(self, "_tune_params", {})
        return metrics

    @classmethod
    def default_resource_request(cls, config: Any) -> Any:
        """Size a trial as its config does, as RLlib's Algorithm (Tune calls it).

        One bundle of 1 CPU for the Algorithm's process (its local runner and learner),
        then one bundle of ``num_cpus_per_env_runner`` CPUs per remote runner, training
        and evaluation, when they run in worker processes or Ray actors. Inline runners
        are tasks in the Algorithm's process: they take no bundle.
        """
        tune = require_tune()
        # Only the counts are read: the trial's own setup() checks every value.
        built = _host_class(cls).get_default_config().update_from_dict(config or {})
        bundles = [{"CPU": 1.0}]
        for runners in (built, built.get_evaluation_config_object()):
            if runners.backend != "inline":
                cpus = float(runners.num_cpus_per_env_runner)
                bundles += [{"CPU": cpus}] * runners.num_env_runners
        return tune.PlacementGroupFactory(bundles, strategy="PACK")


def _host(trainable: TuneTrainable) -> Any:
    """The Algorithm behind this mixin (typed loosely: the mixin cannot name it)."""
    return trainable


def _host_class(cls: type[TuneTrainable]) -> Any:
    return cls


def require_tune() -> ModuleType:
    """Return ``ray.tune`` (made ready for hookbus), or raise ConfigError naming the extra."""
    try:
        import ray.tune as tune
    except ImportError as exc:
        raise ConfigError(
            f"Ray Tune is not installed ({exc}); install hookbus's extra: {_EXTRA}"
        ) from exc
    _become_trainable(tune)
    module: ModuleType = tune
    return module


def _become_trainable(tune: ModuleType) -> None:
    trainable = tune.Trainable
    if trainable not in TuneTrainable.__mro__:
        TuneTrainable.__bases__ = (trainable,)
    configs = sys.modules["ray.tune.tune"]._Config
    if not issubclass(AlgorithmConfig, configs):
        configs.register(AlgorithmConfig)


def watch_for_tune() -> None:
    """Make the Algorithm a Trainable now if Tune is imported, else when it is."""
    tune = sys.modules.get(_TUNE)
    if tune is not None and hasattr(tune, "Trainable"):  # imported (not half-way)
        _become_trainable(tune)
    elif importlib.util.find_spec("ray") is not None:  # finds, never imports, Ray
        if not any(isinstance(finder, _WhenImported) for finder in sys.meta_path):
            sys.meta_path.insert(0, _WhenImported(_TUNE, _become_trainable))


class _WhenImported(importlib.abc.MetaPathFinder):
    """Run ``callback(module)`` right after module ``name`` is imported (a post-import hook).

    It finds the module's spec through the other finders and wraps its loader's
    ``exec_module``; an import that fails leaves the hook in place for the next attempt.
    """

    def __init__(self, name: str, callback: Callable[[ModuleType], None]) -> None:
        self.name = name
        self.callback = callback

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> Any:
        """Return ``fullname``'s spec, its loader wrapped, if it is the watched module."""
        if fullname != self.name:
            return None
        spec = self._find_with_others(fullname, path, target)
        loader = None if spec is None else spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        exec_module = loader.exec_module

        def exec_then_call(module: ModuleType) -> None:
            exec_module(module)
            if self in sys.meta_path:
                sys.meta_path.remove(self)
            self.callback(module)

        loader.exec_module = exec_then_call
        return spec

    def _find_with_others(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None
    ) -> Any:
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                return spec
        return None
