"""Ray Tune: the Algorithm is a Tune Trainable when Ray Tune is installed (``hookbus[tune]``).

Tune recognises a trainable class by ``issubclass(cls, ray.tune.Trainable)`` and nothing
weaker (``ray/tune/registry.py``, ``register_trainable``), so ``tune.Tuner(PPO,
param_space=config)`` needs Tune's class among the Algorithm's bases, as RLlib's has it.
``trainable_base()`` is that base, decided once, when the module defining ``Algorithm``
runs: Tune's ``Trainable`` if ``import ray.tune`` succeeds, else ``object``. What is
installed decides, never the order of imports, and no class changes its bases later.

Importing Ray Tune takes seconds, so the modules that define the Algorithm family are
imported on first use of its names, never by ``import hookbus.runners``:

- ``hookbus.runners``, ``runners.algorithm`` and the ``ppo`` and ``dqn`` packages export
  ``Algorithm``, ``PPO`` and ``DQN`` through a module ``__getattr__`` (PEP 562);
- ``PPOConfig.algo_class`` and ``DQNConfig.algo_class`` resolve on access, as do
  ``get_trainable_cls`` and ``ALGORITHMS`` (``algorithms/_registry.py``).

Configs, EnvRunners and worker processes therefore never import Ray Tune; the first use of
an Algorithm class does, when Ray Tune is installed. Each class is made once per process,
by its module, so one pickled by reference (its module and name, as Ray ships trainables)
is the same class in every process.

The same moment registers ``AlgorithmConfig`` with Tune's interface for config objects
(``ray.tune.tune._Config``: Tune calls its ``to_dict()``), so the config itself is a valid
``param_space``. Tune builds a trial's Algorithm as ``PPO(config=<settings>, storage=...)``;
only such an instance runs Tune's side of ``train()``, ``save()``, ``restore()`` and
``stop()`` (its ``_tune_trial``). Everywhere else those names keep hookbus's meaning.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, TypeGuard

import anyio

from hookbus.kernel import ConfigError

from ..config import AlgorithmConfig


class Trial(Protocol):
    """An Algorithm as this module reads it, Tune's trial or not (this module defines the
    ``Algorithm`` class's base, so it cannot import the class): the trial flag, a config
    from Tune's params, the defaults."""

    _tune_trial: bool

    def config_for(
        self, config: AlgorithmConfig[Any] | Mapping[str, Any] | None
    ) -> AlgorithmConfig[Any]: ...

    @classmethod
    def get_default_config(cls) -> AlgorithmConfig[Any]: ...


__all__ = (
    "TuneCheckpoint",
    "acheckpoint_folder",
    "auto_filled_metrics",
    "checkpoint_folder",
    "require_tune",
    "resource_request",
    "start_trial",
    "trainable_base",
    "trial_config",
    "tune_method",
)

_EXTRA = "pip install 'hookbus[tune]'"


class TuneCheckpoint(Protocol):
    """Ray Tune's ``Checkpoint`` (``ray.tune.Checkpoint``, ``result.checkpoint``) as hookbus
    reads it: where it is (``path`` on its ``filesystem``) and ``to_directory()``."""

    path: str
    filesystem: Any

    def to_directory(self, path: str | None = None) -> str: ...


def checkpoint_folder(
    checkpoint: str | os.PathLike[str] | TuneCheckpoint, name: str
) -> str | os.PathLike[str]:
    """Return the local folder of ``checkpoint``: a path as it is, a Tune ``Checkpoint``'s
    own folder when it is on the local filesystem, else a temporary copy
    (``to_directory()``, as RLlib's ``Algorithm.from_checkpoint`` makes one).

    Ray is never imported here. Anything else is a TypeError naming ``name`` (the method
    called) and what it takes.
    """
    if _is_tune_checkpoint(checkpoint):
        if getattr(checkpoint.filesystem, "type_name", "") == "local":
            return checkpoint.path
        return checkpoint.to_directory()
    if isinstance(checkpoint, str | os.PathLike):
        return checkpoint
    raise TypeError(
        f"{name}() takes a checkpoint folder (a str or os.PathLike) or Ray Tune's "
        f"Checkpoint (result.checkpoint), got {checkpoint!r}"
    )


async def acheckpoint_folder(
    checkpoint: str | os.PathLike[str] | TuneCheckpoint, name: str
) -> str | os.PathLike[str]:
    """Async twin of ``checkpoint_folder()``: a copy is made in a worker thread."""
    if not _is_tune_checkpoint(checkpoint):
        return checkpoint_folder(checkpoint, name)
    return await anyio.to_thread.run_sync(checkpoint_folder, checkpoint, name)


def _is_tune_checkpoint(checkpoint: object) -> TypeGuard[TuneCheckpoint]:
    """Tell whether ``checkpoint`` is Ray Train's (and Tune's) ``Checkpoint``, without
    importing Ray: it can be one only if Ray Train's checkpoint module is imported. (Such a
    checkpoint is an ``os.PathLike`` to ``isinstance``: its ``__fspath__`` raises.)"""
    module = sys.modules.get("ray.train._checkpoint")
    checkpoint_class = getattr(module, "Checkpoint", None)
    return checkpoint_class is not None and isinstance(checkpoint, checkpoint_class)


def trainable_base() -> type:
    """Return the Algorithm's base: Tune's ``Trainable`` when Ray Tune is installed, else
    ``object``."""
    try:
        tune = require_tune()
    except ConfigError:
        return object
    base: type = tune.Trainable
    return base


def require_tune() -> ModuleType:
    """Return ``ray.tune`` (made ready for hookbus), or raise ConfigError naming the extra."""
    try:
        import ray.tune as tune
    except ImportError as exc:
        raise ConfigError(
            f"Ray Tune is not installed ({exc}); install hookbus's extra: {_EXTRA}"
        ) from exc
    configs = sys.modules["ray.tune.tune"]._Config
    if not issubclass(AlgorithmConfig, configs):
        configs.register(AlgorithmConfig)
    module: ModuleType = tune
    return module


def start_trial(algorithm: Trial, params: dict[str, Any], storage: object) -> None:
    """Initialise ``algorithm`` as Tune's trial: Tune's ``Trainable.__init__`` calls its
    ``setup(params)``. ``storage`` is Tune's (a ``StorageContext``), handed back to it
    unread: an ``object`` here."""
    algorithm._tune_trial = True
    require_tune().Trainable.__init__(algorithm, config=params, storage=storage)


def tune_method(algorithm: object, name: str, *args: Any, **kwargs: Any) -> Any:
    """Call Tune's ``Trainable.<name>`` on a trial's Algorithm (hookbus's method shadows it)."""
    return getattr(require_tune().Trainable, name)(algorithm, *args, **kwargs)


def trial_config(algorithm: Trial, params: dict[str, Any]) -> AlgorithmConfig[Any]:
    """Return the checked config a trial builds from Tune's resolved ``params``.

    ``params`` is ``AlgorithmConfig.to_dict()``'s flat form (or the view by section). With a
    run directory configured (``reporting(logdir=...)``), hookbus's writers write into
    ``<trial dir>/hookbus`` instead, one per trial.
    """
    built: AlgorithmConfig[Any] = algorithm.config_for(without_unrestored_callbacks(params))
    if built.logdir is not None:
        built.reporting(logdir=str(_trial_dir(algorithm) / "hookbus"))
    return built


_PLACEHOLDER_TOKENS = ("__ref_ph", "__fn_ph")
"""What Tune puts in a trial's config for an object of ``param_space`` (a class, a function,
an instance: ``ray/tune/impl/placeholder.py``): ``(token, hash)``, a list once stored."""


def _is_placeholder(value: object) -> bool:
    return (
        isinstance(value, list | tuple)
        and len(value) == 2
        and value[0] in _PLACEHOLDER_TOKENS
        and isinstance(value[1], str)
    )


def without_unrestored_callbacks(params: Mapping[str, Any]) -> dict[str, Any]:
    """Return Tune's ``params`` without the callbacks ``Tuner.restore`` could not put back.

    Tune swaps each object of the first ``param_space`` for a placeholder and, on
    ``Tuner.restore(path, param_space=config)``, puts in the new ``param_space``'s object at
    the same place; a place where the new one has none keeps the placeholder. In the
    callbacks' keys that means the new config dropped that callback (RLlib's
    continue-from-checkpoint example restores after ``callbacks(None)``): it is left out.
    Anywhere else the setting cannot be rebuilt, and a ConfigError names it.
    """
    kept: dict[str, Any] = {}
    for key, value in params.items():
        if key == "callbacks" or key.startswith("callbacks_"):
            if _is_placeholder(value):
                value = None
            elif isinstance(value, list):
                value = [item for item in value if not _is_placeholder(item)]
        else:
            _refuse_placeholders(value, key)
        kept[key] = value
    return kept


def _refuse_placeholders(value: object, where: str) -> None:
    if _is_placeholder(value):
        raise ConfigError(
            f"setting {where!r} holds an object of the first run's param_space that "
            "Tuner.restore could not put back: the param_space given to Tuner.restore has "
            "no object at that place; give it the setting's object (as in the first run)"
        )
    if isinstance(value, Mapping):
        for key, item in value.items():
            _refuse_placeholders(item, f"{where}.{key}")
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _refuse_placeholders(item, f"{where}[{index}]")


def _trial_dir(algorithm: Any) -> Path:
    """The trial's directory: in Tune's storage if local, else its working directory
    (which Tune uploads with ``SyncConfig(sync_artifacts=True)``).

    ``algorithm`` is Any: what is read of it is Tune's ``Trainable``'s (``logdir``), a
    base mypy does not see (Ray is untyped here)."""
    storage = getattr(algorithm, "_storage", None)
    filesystem = getattr(storage, "storage_filesystem", None)
    if storage is not None and getattr(filesystem, "type_name", "") == "local":
        return Path(storage.trial_fs_path)
    return Path(algorithm.logdir)


def auto_filled_metrics(
    algorithm: Trial, params: dict[str, Any], *args: Any, **kwargs: Any
) -> dict[str, Any]:
    """Return Tune's auto-filled result keys, ``config`` being the trial's settings dict."""
    metrics: dict[str, Any] = tune_method(algorithm, "get_auto_filled_metrics", *args, **kwargs)
    metrics["config"] = params
    return metrics


def resource_request(
    algorithm_class: type[Trial], config: AlgorithmConfig[Any] | Mapping[str, Any] | None
) -> Any:
    """Return a trial's bundles, sized by its config as RLlib's Algorithm sizes them.

    ``config`` is an AlgorithmConfig (as RLlib's takes it too), a dict of settings (what
    Tune passes: the trial's resolved ``to_dict()``) or None (the defaults).

    One bundle of 1 CPU for the Algorithm's process (its local runner and learner), then
    one of ``num_cpus_per_env_runner`` CPUs per remote runner, training and evaluation,
    when they run in worker processes or Ray actors. Inline runners are tasks in the
    Algorithm's process: they take no bundle.
    """
    tune = require_tune()
    # Only the counts are read: the trial's own setup() checks every value.
    if isinstance(config, AlgorithmConfig):
        built = config.copy(copy_frozen=False)
    else:
        settings = without_unrestored_callbacks(config or {})
        built = algorithm_class.get_default_config().update_from_dict(settings)
    bundles = [{"CPU": 1.0}]
    for runners in (built, built.get_evaluation_config_object()):
        if runners.backend != "inline":
            cpus = float(runners.num_cpus_per_env_runner)
            bundles += [{"CPU": cpus}] * runners.num_env_runners
    return tune.PlacementGroupFactory(bundles, strategy="PACK")
