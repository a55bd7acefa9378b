"""What a checkpoint holds of an Algorithm: taking that state, loading it all-or-nothing, and
building an Algorithm from a checkpoint (``Algorithm.from_checkpoint``).

Loading goes in three steps, so that a failed restore leaves the Algorithm as it was:

1. snapshot what is about to change: the callbacks' states, ``training_iteration``, the
   learner's, the metrics' and the extra state (the learner's snapshot is also the
   template its saved state must match);
2. check the whole saved state against this Algorithm before touching it: the learner's
   structure (keys, array shapes, dtypes), the metrics on a scratch MetricsLogger, the
   extra state with ``check_extra_state`` (DQN: its replay buffer on a scratch buffer);
3. apply it part by part; if a part raises (a user callback's ``set_state``, or a value the
   checks could not see), every part applied so far, the failing one included, gets its
   snapshot back, and a ConfigError names the file and what failed.

Callbacks go first: theirs is user code, the likeliest to fail, and if it does nothing of
the Algorithm's own has changed yet.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar

from hookbus.kernel import ConfigError
from hookbus.metrics import MetricsLogger

from .._rl_module import Stateful
from .._types import EnvSpec
from ._checkpoint import (
    CHECKPOINT_FILE,
    SavesState,
    callback_states,
    pair_callback_states,
    read_checkpoint,
)
from ._stored_config import config_from_record, config_record
from ._structure import check_structure

if TYPE_CHECKING:
    from hookbus.kernel import Bus

    from ..config import AlgorithmConfig

__all__ = ("Checkpointed", "build_restored", "load_state", "saved_state")


class Checkpointed(Protocol):
    """What a checkpoint holds of an Algorithm, all of it public: the parts it reads, and
    sets on a restore (its iteration, learner, logger, callbacks and extra state), and the
    config it records."""

    training_iteration: int

    @property
    def config(self) -> AlgorithmConfig[Any]: ...

    @property
    def bus(self) -> Bus: ...

    @property
    def metrics(self) -> MetricsLogger: ...

    @property
    def learner(self) -> Stateful: ...

    def get_extra_state(self) -> dict[str, Any]: ...

    def set_extra_state(self, state: dict[str, Any]) -> None: ...

    def check_extra_state(self, state: dict[str, Any]) -> None: ...


class Restorable(Protocol):
    """An Algorithm as ``from_checkpoint`` uses it once built."""

    def restore_from_path(self, path: str | os.PathLike[str]) -> None: ...

    def stop(self) -> None: ...


R = TypeVar("R", bound=Restorable)


def build_restored(
    cls: type[R],
    path: str | os.PathLike[str],
    config: AlgorithmConfig[Any] | None,
    env: EnvSpec | None = None,
) -> R:
    """Build a ``cls`` from ``config`` (by default the checkpoint's own) and restore ``path``.

    ``env``, if given, replaces the config's env (the checkpoint's or ``config``'s, which
    is left as it was). ConfigError if the checkpoint holds another algorithm than the
    config builds, if its own config names code the caller did not give (``env=``,
    ``config=``), or if building or restoring fails; what was built is then stopped.
    """
    state = read_checkpoint(path)
    if config is None:
        config = config_from_record(state["config"], path, env=env)
    elif env is not None:
        config = config.copy(copy_frozen=False).environment(env)
    name = state["algorithm"]
    algo_class = config.algo_class
    if getattr(algo_class, "__name__", None) != name or not (
        isinstance(algo_class, type) and issubclass(algo_class, cls)
    ):
        raise ConfigError(
            f"checkpoint {str(path)!r} holds a {name} algorithm; "
            f"{type(config).__name__} builds {getattr(algo_class, '__name__', None)}"
        )
    try:
        algorithm: R = config.build()
    except Exception as exc:  # an env that is not registered here, a bad setting, ...
        raise ConfigError(f"cannot build checkpoint {str(path)!r}'s {name}: {exc}") from exc
    try:
        algorithm.restore_from_path(path)
    except BaseException:
        algorithm.stop()
        raise
    return algorithm


class _Part(NamedTuple):
    """One part of the Algorithm a restore changes: how to read it and to set it."""

    name: str
    get: Callable[[], Any]
    set: Callable[[Any], None]
    saved: Any  # the checkpoint's value for it


def saved_state(algo: Checkpointed, records: dict[str, Any]) -> dict[str, Any]:
    """Return everything a checkpoint holds of ``algo`` (``_checkpoint.SECTIONS``), and
    ``"modules"``, the ``records`` of modules a fresh Algorithm may lack (added while
    training), if there are any."""
    return {
        **({"modules": records} if records else {}),
        "algorithm": type(algo).__name__,
        "training_iteration": algo.training_iteration,
        "learner": algo.learner.get_state(),
        "metrics": algo.metrics.get_state(),
        "callbacks": callback_states(algo.bus.callbacks),
        "extra": algo.get_extra_state(),
        "config": config_record(algo.config),
    }


def load_state(algo: Checkpointed, state: dict[str, Any], path: str | os.PathLike[str]) -> None:
    """Load ``state`` (sections checked by ``read_checkpoint``) into ``algo``, or change nothing.

    Raises ConfigError naming the checkpoint file if the state does not fit ``algo`` or a
    part of it fails to load (then everything loaded is rolled back).
    """
    file = str(Path(path) / CHECKPOINT_FILE)
    parts = _parts(algo, state)
    snapshots = [_snapshot(part, file) for part in parts]
    learner_now = next(
        snap for part, snap in zip(parts, snapshots, strict=True) if part.name == "learner"
    )
    _check(algo, state, learner_now, file)
    _apply(parts, snapshots, file)


def _parts(algo: Checkpointed, state: dict[str, Any]) -> list[_Part]:
    parts = [
        _Part(f"callback {type(cb).__qualname__}", _getter(cb), cb.set_state, saved)
        for cb, saved in pair_callback_states(algo.bus.callbacks, state["callbacks"])
    ]

    def set_iteration(value: int) -> None:
        algo.training_iteration = value

    return [
        *parts,
        _Part(
            "training_iteration",
            lambda: algo.training_iteration,
            set_iteration,
            state["training_iteration"],
        ),
        _Part("learner", algo.learner.get_state, algo.learner.set_state, state["learner"]),
        _Part("metrics", algo.metrics.get_state, algo.metrics.set_state, state["metrics"]),
        _Part("extra state", algo.get_extra_state, algo.set_extra_state, state["extra"]),
    ]


def _getter(callback: object) -> Callable[[], Any]:
    if not isinstance(callback, SavesState):  # set_state only: nothing to roll back to
        return lambda: None
    get_state = callback.get_state

    def snapshot() -> Any:
        # A user's get_state may hand out its live containers; its set_state may then fill
        # them in place. A deep copy keeps the snapshot what it was.
        return copy.deepcopy(get_state())

    return snapshot


def _snapshot(part: _Part, file: str) -> Any:
    try:
        return part.get()
    except Exception as exc:
        raise ConfigError(
            f"cannot restore checkpoint {file!r}: reading the current {part.name} (to roll "
            f"back to if loading fails) raised {type(exc).__name__}: {exc}"
        ) from exc


def _check(
    algo: Checkpointed, state: dict[str, Any], learner_now: dict[str, Any], file: str
) -> None:
    checks: list[tuple[str, Callable[[], None]]] = [
        ("", lambda: check_structure(state["learner"], learner_now, "learner")),
        ("its metrics section: ", lambda: MetricsLogger().set_state(state["metrics"])),
        ("its extra section: ", lambda: algo.check_extra_state(state["extra"])),
    ]
    for where, check in checks:
        try:
            check()
        except Exception as exc:
            raise ConfigError(
                f"checkpoint {file!r} does not fit this {type(algo).__name__}: {where}{exc}"
            ) from exc


def _apply(parts: list[_Part], snapshots: list[Any], file: str) -> None:
    for done, part in enumerate(parts, start=1):
        try:
            part.set(part.saved)
        except BaseException as exc:
            # The failing part may be half-set: it is rolled back too.
            failed = _roll_back(parts[:done], snapshots[:done])
            if not isinstance(exc, Exception):
                raise  # KeyboardInterrupt and the like: rolled back, never converted
            outcome = (
                f"rolling back failed for {'; '.join(failed)}"
                if failed
                else "everything it had loaded was rolled back"
            )
            raise ConfigError(
                f"cannot restore checkpoint {file!r}: loading the {part.name} raised "
                f"{type(exc).__name__}: {exc}; {outcome}"
            ) from exc


def _roll_back(parts: list[_Part], snapshots: list[Any]) -> list[str]:
    """Set every part back to its snapshot, last first; return the failures (if any)."""
    failed = []
    for part, snapshot in zip(reversed(parts), reversed(snapshots), strict=True):
        if snapshot is None and part.name.startswith("callback "):
            continue  # a callback without state: nothing to set back
        try:
            part.set(snapshot)
        except Exception as exc:
            failed.append(f"the {part.name} ({type(exc).__name__}: {exc})")
    return failed
