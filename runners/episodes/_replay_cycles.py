"""Reduce cycles for replay: which logger an event's handlers get, and what each iteration
reported, the way the framework that made the recording reduces and merges.

``HookReplay`` asks its cycle for the logger of every event (``logger_for``), tells it
when an event comes (``before``: its handlers have not run yet) and when its handlers have
run (``after``; an event that ``hooks=``/``sources=`` leave unpublished is done at the next
event's ``before``), and reads the iterations at the end (``outcome``). The recording's
header names its producer; ``cycle_for`` picks the cycle:

- ``RLlibCycle`` (producer ``"rllib"``): RLlib 2.60's. Each EnvRunner source logs into its
  own logger, handed over at the end of each of its ``sample()`` calls (its
  ``on_sample_end``: RLlib's ``get_metrics()`` follows every ``sample()`` in training); the
  Algorithm merges the handovers under ``env_runners`` (``aggregate``: a windowed mean of
  several runners is a mean of their means, sums add, lifetime sums never reset); the
  driver's own events (``source="algorithm"``) log into the Algorithm's logger; at each
  ``on_train_result`` the Algorithm's logger is compiled first (what handlers of
  ``on_train_result`` log shows in the next iteration, as in RLlib), giving that
  iteration's results. Evaluation (run after training in an iteration, as RLlib runs it
  by default): the evaluation runners' handovers of one round give its
  ``evaluation/env_runners`` values (RLlib's latest-merged peek), and what RLlib merges or
  logs after compiling (the round's handovers, logs of ``on_evaluate_start``/``_end``
  handlers) counts in the next iteration's compile, as there.
- ``SharedCycle`` (hookbus's own runners, SB3's bridge, any other producer): one logger
  for every event; each iteration's results are its ``results()`` once the handlers of
  ``on_train_result`` have run, then it is reduced (hookbus's Algorithm after each result;
  SB3's bridge after each log dump).
- ``merge="pooled"``: ``SharedCycle`` never reduced: one logger takes every value of every
  runner, so a mean is the true mean over every value (of its window), a sum the total.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from hookbus.events import BaseEvent, EvaluateEnd, EvaluateStart, SampleEnd, TrainResult
from hookbus.kernel import ConfigError, ReplayOutcome, ReplaySettings
from hookbus.metrics import MetricsLogger, results

from ._rllib_logger import RLlibMetricsLogger
from ._standins import MAX_SOURCES

__all__ = ("RLlibCycle", "ReplayCycle", "SharedCycle", "cycle_for")

RUNNERS = "env_runners"
EVALUATION = "evaluation"


class ReplayCycle:
    """What a cycle does for ``HookReplay`` (the base: every event done when it comes)."""

    def __init__(self) -> None:
        self.iterations: list[dict[str, Any]] = []
        self._open: BaseEvent | None = None  # the event whose handlers may still run

    def logger_for(self, event: BaseEvent) -> Any:
        raise NotImplementedError

    def before(self, event: BaseEvent) -> None:
        """Note ``event``, whose handlers run next (if it is published)."""
        if self._open is not None:
            self._done(self._open)
        self._open = event
        self._begin(event)

    def after(self, event: BaseEvent) -> None:
        """Note that ``event``'s handlers have all run."""
        if self._open is event:
            self._open = None
            self._done(event)

    def outcome(self) -> ReplayOutcome:
        """Return the iterations so far (and the final metrics, if not the logger's)."""
        if self._open is not None:
            event, self._open = self._open, None
            self._done(event)
        return ReplayOutcome(self.iterations)

    def _begin(self, event: BaseEvent) -> None:
        """Act on ``event`` before its handlers run."""

    def _done(self, event: BaseEvent) -> None:
        """Act on ``event`` after its handlers ran (or were left out)."""


class SharedCycle(ReplayCycle):
    """One logger for every event; an iteration is its results after ``on_train_result``."""

    def __init__(self, logger: MetricsLogger, *, reduce: bool) -> None:
        super().__init__()
        self.logger = logger
        self.reduce = reduce

    def logger_for(self, event: BaseEvent) -> MetricsLogger:
        return self.logger

    def _done(self, event: BaseEvent) -> None:
        if isinstance(event, TrainResult):
            self.iterations.append(results(self.logger))
            if self.reduce:
                self.logger.reduce()


class RLlibCycle(ReplayCycle):
    """RLlib 2.60's cycle: a logger per EnvRunner, merged into the Algorithm's each sample."""

    def __init__(self) -> None:
        super().__init__()
        self.root = RLlibMetricsLogger(root=True)
        """The Algorithm's logger (``algorithm.metrics``): the driver's events log here."""
        self.runners: OrderedDict[str, RLlibMetricsLogger] = OrderedDict()
        """Each EnvRunner source's logger (``env_runner.metrics``), by source: at most
        ``MAX_SOURCES``, the least recently made going first (a hostile recording)."""
        self._round: list[Any] = []  # evaluation handovers of the round under way
        self._after_compile: list[Any] = []  # evaluation handovers RLlib merges after it
        self._evaluation: dict[str, Any] | None = None  # the last round's, for its result
        self._deferred: _Deferred | None = None  # the driver's logs while evaluating

    def logger_for(self, event: BaseEvent) -> Any:
        source = event.source
        if _is_runner(source):
            found = self.runners.get(source)
            # A runner numbering from 0 again is a new one (RLlib restarted it): a new
            # process, with a logger of its own.
            if found is None or event.seq == 0:
                if found is None and len(self.runners) >= MAX_SOURCES:
                    self.runners.popitem(last=False)
                found = self.runners[source] = RLlibMetricsLogger()
            return found
        return self.root if self._deferred is None else self._deferred

    def _begin(self, event: BaseEvent) -> None:
        if isinstance(event, EvaluateStart) and self._deferred is None:
            self._deferred = _Deferred(self.root)
        elif isinstance(event, EvaluateEnd):
            if self._deferred is None:
                self._deferred = _Deferred(self.root)
            view = RLlibMetricsLogger(root=True)
            view.aggregate(self._round, key=(EVALUATION, RUNNERS))
            self._evaluation = _plain(view.peek(EVALUATION, default={}, latest_merged_only=True))
            self._after_compile += self._round
            self._round = []
        elif isinstance(event, TrainResult):
            iteration = _plain(self.root.compile())
            if self._evaluation is not None:
                iteration[EVALUATION] = self._evaluation
                self._evaluation = None
            self.iterations.append(iteration)
            # What RLlib merged and logged after its compile (an evaluation round after
            # training) belongs to the next iteration's.
            if self._after_compile:
                self.root.aggregate(self._after_compile, key=(EVALUATION, RUNNERS))
                self._after_compile = []
            if self._deferred is not None:
                self._deferred.apply()
                self._deferred = None

    def outcome(self) -> ReplayOutcome:
        """Return the iterations; the final metrics are the last one's (RLlib's loggers
        hold nothing more once an iteration is compiled), the logger the Algorithm's."""
        found = super().outcome()
        last = self.iterations[-1] if self.iterations else {}
        return ReplayOutcome(found.iterations, metrics=last, logger=self.root)

    def _done(self, event: BaseEvent) -> None:
        if isinstance(event, SampleEnd) and _is_runner(event.source):
            handover = self.runners[event.source].handover() if event.source in self.runners else {}
            if not handover:  # nothing logged since the last one: nothing to merge
                return
            if event.source.startswith("eval_"):
                self._round.append(handover)
            else:
                self.root.aggregate([handover], key=(RUNNERS,))


class _Deferred:
    """The Algorithm's logger while RLlib evaluates after its compile: logs wait for the
    next iteration's (peeks read the logger as it is)."""

    def __init__(self, logger: RLlibMetricsLogger) -> None:
        self._logger = logger
        self._calls: list[Callable[[], None]] = []

    def log_value(self, *args: Any, **kwargs: Any) -> None:
        self._calls.append(lambda: self._logger.log_value(*args, **kwargs))

    def log_dict(self, *args: Any, **kwargs: Any) -> None:
        self._calls.append(lambda: self._logger.log_dict(*args, **kwargs))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._logger, name)

    def apply(self) -> None:
        calls, self._calls = self._calls, []
        for call in calls:
            call()


def cycle_for(logger: MetricsLogger, settings: ReplaySettings) -> ReplayCycle:
    """Return the cycle a replay with ``settings`` follows (``logger``: the replay's)."""
    if settings.merge == "pooled":
        return SharedCycle(logger, reduce=False)
    if settings.producer == "rllib":
        if settings.logger_given:
            raise ConfigError(
                "metrics_logger= is the one logger of a pooled replay; a replay of an RLlib "
                "recording follows RLlib's cycle, with a logger per EnvRunner and the "
                "Algorithm's (see ReplayResult.iterations): pass merge='pooled' to log every "
                "event into yours"
            )
        return RLlibCycle()
    return SharedCycle(logger, reduce=True)


def _is_runner(source: str) -> bool:
    return source.startswith(("env_runner:", "eval_env_runner:"))


def _plain(tree: Any) -> Any:
    """Return ``tree`` with numpy scalars as Python numbers (results are plain data)."""
    if isinstance(tree, dict):
        return {key: _plain(value) for key, value in tree.items()}
    if isinstance(tree, list):
        return [_plain(value) for value in tree]
    if isinstance(tree, np.generic):
        return tree.item()
    return tree
