"""Stand-ins for the live objects a recording cannot hold: the Algorithm, EnvRunners, envs.

A replay rebuilds episodes from their events, but no recording holds an Algorithm, an
EnvRunner or a gymnasium env. Callbacks read them all the same (RLlib's curriculum example
keeps its task in ``algorithm._counters``, a renderer reaches ``env.envs[0]``), and with
None in their place a test died with ``'NoneType' object has no attribute ...``. So a
replay passes stand-ins instead: each answers what the recording says (an iteration, a
worker index, the metrics logger the handlers log into) and refuses anything else with a
``ReplayStandInError`` that says what to do instead.

``StandIns`` is one replay's set: ``HookReplay.live_arguments`` hands it every event with
the live arguments rebuilt so far, and it fills in those the event's hook passes and
nothing else gave.
"""

from __future__ import annotations

import functools
from collections import OrderedDict, defaultdict
from collections.abc import Callable
from typing import Any, ClassVar

from hookbus.events import (
    AlgorithmInit,
    BaseEvent,
    CheckpointLoaded,
    EnvironmentCreated,
    EnvRunnersRecreated,
    EvaluateEnd,
    EvaluateOfflineEnd,
    EvaluateOfflineStart,
    EvaluateStart,
    OfflineEvalRunnersRecreated,
    TrainResult,
)
from hookbus.kernel import HookbusError

__all__ = (
    "MAX_SOURCES",
    "AlgorithmStandIn",
    "EnvRunnerStandIn",
    "EnvStandIn",
    "ReplayStandInError",
    "StandIns",
)

_ADVICE = (
    "record the value you need in the event (an env's info key, a field of your own "
    "event type) or as a custom metric, or test this callback live (docs/testing.md)"
)

# The Algorithm's own hooks: their metrics_logger is the Algorithm's (a learner hook's is
# its learner's), and those with a training_iteration say where the Algorithm is.
_ALGORITHM_EVENTS = (
    AlgorithmInit,
    TrainResult,
    EvaluateStart,
    EvaluateEnd,
    EvaluateOfflineStart,
    EvaluateOfflineEnd,
    CheckpointLoaded,
    EnvRunnersRecreated,
    OfflineEvalRunnersRecreated,
)


class ReplayStandInError(HookbusError, AttributeError):
    """Raise when a callback uses what a replay's stand-in cannot give.

    A replay passes stand-ins for the Algorithm, the EnvRunners and their envs, built from
    what the recording holds; anything else on them (``env.envs``,
    ``algorithm.env_runner_group``, ...) raises this. It is an AttributeError, so that
    ``getattr(obj, name, default)`` and ``hasattr`` work on stand-ins as on other objects.
    """


class StandIn:
    """What every stand-in shares: its name in messages, and the refusal of the rest."""

    __hookbus_standin__: ClassVar[bool] = True
    """Marks a replay's stand-in (hookbus's own callbacks treat one as absent)."""

    def __init__(self, name: str, source: str | None = None) -> None:
        self._name = name
        self._source = source

    def _gives(self) -> list[str]:
        """Name what this stand-in answers (its public attributes)."""
        return sorted(k for k in vars(self) if not k.startswith("_")) + self._properties()

    def _properties(self) -> list[str]:
        return []

    def __getattr__(self, name: str) -> Any:
        # Only called for what the stand-in has not: Python's own probing (copy, pickle,
        # numpy's __array__ ...) gets the plain AttributeError it expects.
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        raise ReplayStandInError(self._cannot_give(name, "which gives only " + self._listed()))

    def _cannot_give(self, name: str, why: str) -> str:
        what = self.__dict__.get("_name", "stand-in")  # a copy may have no _name yet
        source = self.__dict__.get("_source")
        of = f" (source {source!r})" if source is not None else ""
        return (
            f"a replay cannot give {what}.{name}: the {what}{of} it passes is a stand-in "
            f"built from the recording, {why}; {_ADVICE}"
        )

    def _listed(self) -> str:
        return ", ".join(self._gives()) or "nothing"

    def __repr__(self) -> str:
        source = self.__dict__.get("_source")
        of = f" of {source!r}" if source is not None else ""
        return f"<replay stand-in for {self.__dict__.get('_name', '?')}{of}>"


class AlgorithmStandIn(StandIn):
    """The Algorithm on replay: its iteration, its results so far and its metrics logger.

    ``iteration`` (also ``training_iteration``) is what RLlib's Algorithm says at that hook:
    the number of training iterations done (at ``on_train_result``, the result's
    ``training_iteration``). ``results`` are the recorded train results up to the current
    one, oldest first; ``metrics`` is the logger the Algorithm's hooks log into on replay;
    ``_counters`` is an empty ``defaultdict(int)`` at the start, as RLlib's, for callbacks
    that keep their own counts there.
    """

    def __init__(self) -> None:
        super().__init__("algorithm")
        self.iteration = 0
        self.results: list[dict[str, Any]] = []
        self.metrics: Any = None
        self._counters: defaultdict[str, int] = defaultdict(int)

    @property
    def training_iteration(self) -> int:
        """The training iterations done so far (``iteration``)."""
        return self.iteration

    def _properties(self) -> list[str]:
        return ["_counters", "training_iteration"]


class EnvStandIn(StandIn):
    """An EnvRunner's (vector) env on replay: ``num_envs`` if recorded, and ``unwrapped``."""

    num_envs: int  # set once the runner's env creation is replayed (else it is refused)

    def __init__(self, source: str) -> None:
        super().__init__("env", source)

    @property
    def unwrapped(self) -> EnvStandIn:
        """This stand-in itself, as an unwrapped vector env's ``unwrapped`` is."""
        return self

    def _properties(self) -> list[str]:
        return ["unwrapped"]


class RunnerConfigStandIn(StandIn):
    """An EnvRunner's config on replay: ``in_evaluation``, and what its env's creation says
    (``env``, ``env_config``, ``num_envs_per_env_runner``) if the recording holds it."""

    # Set once the runner's env creation is replayed (else refused as any unknown name).
    env: str
    env_config: dict[str, Any]
    num_envs_per_env_runner: int

    def __init__(self, source: str, in_evaluation: bool) -> None:
        super().__init__("env_runner.config", source)
        self.in_evaluation = in_evaluation


class EnvRunnerStandIn(StandIn):
    """An EnvRunner on replay: ``worker_index``, ``config``, ``env`` and ``metrics``.

    The index comes from the recorded ``on_environment_created`` or, without one, from the
    source's name (``"env_runner:1"``); ``config.in_evaluation`` likewise (an
    ``eval_env_runner`` source). ``metrics`` is the logger the runner's hooks log into.
    """

    def __init__(self, source: str) -> None:
        super().__init__("env_runner", source)
        prefix, _, index = source.rpartition(":")
        self._worker_index = int(index) if index.isdigit() else None
        self.config = RunnerConfigStandIn(source, prefix == "eval_env_runner")
        self.env = EnvStandIn(source)
        self.metrics: Any = None

    @property
    def worker_index(self) -> int:
        """The runner's index (0: the local runner), from the recording."""
        if self._worker_index is None:
            why = "whose source has no on_environment_created and no ':<index>' in its name"
            raise ReplayStandInError(self._cannot_give("worker_index", why))
        return self._worker_index

    def _properties(self) -> list[str]:
        return ["worker_index"]

    def created(self, event: EnvironmentCreated) -> None:
        """Take in what the runner's env creation recorded."""
        self._worker_index = event.worker_index
        config = self.config
        config.in_evaluation = event.in_evaluation
        config.env = event.env_id
        config.env_config = dict(event.env_config)
        config.num_envs_per_env_runner = event.num_envs
        self.env.num_envs = event.num_envs


MAX_SOURCES = 10_000
"""How many sources' EnvRunner stand-ins a replay keeps (as ``check_lifecycle`` tracks at
most this many sources): past it, the least recently made one goes, and a later event of
that source gets a new stand-in (which knows its index from the source's name)."""

_MAX_FILLS = 4 * MAX_SOURCES


class StandIns:
    """One replay's stand-ins: the Algorithm's, and each source's EnvRunner and env.

    Bounded whatever the recording holds: at most ``MAX_SOURCES`` runner stand-ins and
    ``4 * MAX_SOURCES`` fills.
    """

    def __init__(self) -> None:
        self.algorithm: AlgorithmStandIn | None = None
        self.runners: OrderedDict[str, EnvRunnerStandIn] = OrderedDict()
        # What to fill in, per event type and source: worked out once, as replay runs
        # this for every recorded step (a few dict operations per event). A fill holds its
        # source's runner stand-in, so the fills go with any runner stand-in that goes.
        self._fills: dict[tuple[type[BaseEvent], str], Fill] = {}

    def complete(self, event: BaseEvent, live: dict[str, Any]) -> dict[str, Any]:
        """Add to ``live`` (and return it) the stand-ins ``event``'s hook passes and that
        nothing gave: ``algorithm``, ``env_runner``, ``env``; and a recreation's indices."""
        key = (type(event), event.source)
        fill = self._fills.get(key)
        if fill is None:
            if len(self._fills) >= _MAX_FILLS:  # they are cheap to work out again
                self._fills.clear()
            fill = self._fills[key] = self._fill_for(*key)
        fill(event, live)
        return live

    def _fill_for(self, event_type: type[BaseEvent], source: str) -> Fill:
        names = event_type.live_args
        parts: list[Fill] = []
        if "algorithm" in names:
            parts.append(self._give_algorithm)
        if "env_runner" in names or "env" in names:
            runner = self.runners.get(source)
            if runner is None:
                if len(self.runners) >= MAX_SOURCES:  # a hostile or huge recording
                    self.runners.popitem(last=False)
                    self._fills.clear()
                runner = self.runners[source] = EnvRunnerStandIn(source)
            created = issubclass(event_type, EnvironmentCreated)
            parts.append(_runner_fill(runner, "env_runner" in names, "env" in names, created))
        if issubclass(event_type, EnvRunnersRecreated | OfflineEvalRunnersRecreated):
            parts.append(_recreated)
        if len(parts) == 1:
            return parts[0]
        return functools.partial(_fill_all, tuple(parts))

    def _give_algorithm(self, event: BaseEvent, live: dict[str, Any]) -> None:
        if live.get("algorithm") is not None:
            return
        algorithm = self.algorithm
        if algorithm is None:
            algorithm = self.algorithm = AlgorithmStandIn()
        live["algorithm"] = algorithm
        if isinstance(event, _ALGORITHM_EVENTS):
            logger = live.get("metrics_logger")
            if logger is not None:
                algorithm.metrics = logger
            iteration = getattr(event, "training_iteration", None)
            if iteration is not None:
                algorithm.iteration = iteration
            if isinstance(event, TrainResult):
                algorithm.results.append(live.get("result", event.result))


Fill = Callable[[BaseEvent, dict[str, Any]], None]
"""Fill in one event's stand-ins: ``fill(event, live)``."""


def _runner_fill(
    runner: EnvRunnerStandIn, gives_runner: bool, gives_env: bool, created: bool
) -> Fill:
    env = runner.env

    def fill(event: BaseEvent, live: dict[str, Any]) -> None:
        if created and isinstance(event, EnvironmentCreated):
            runner.created(event)
        runner.metrics = live.get("metrics_logger")
        if gives_runner and live.get("env_runner") is None:
            live["env_runner"] = runner
        if gives_env and live.get("env") is None:
            live["env"] = env

    return fill


def _fill_all(parts: tuple[Fill, ...], event: BaseEvent, live: dict[str, Any]) -> None:
    for part in parts:
        part(event, live)


def _recreated(event: BaseEvent, live: dict[str, Any]) -> None:
    """Pass a runners' recreation its indices (and whether they evaluate): plain data the
    event holds."""
    if isinstance(event, EnvRunnersRecreated | OfflineEvalRunnersRecreated):
        if live.get("env_runner_indices") is None:
            live["env_runner_indices"] = list(event.env_runner_indices)
    if isinstance(event, EnvRunnersRecreated) and live.get("is_evaluation") is None:
        live["is_evaluation"] = event.is_evaluation
