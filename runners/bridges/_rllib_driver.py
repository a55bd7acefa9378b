"""The RLlib bridge on the driver: the Algorithm's hooks, the recording, stop requests.

- **The result train() returns** is what the recording holds: RLlib calls
  ``on_train_result`` from ``Algorithm.log_result``, and later callbacks (RLlib's own
  objects after the bridge's, ``config.callbacks(on_train_result=...)``) may still add keys
  there, into the dict ``Trainable.train()`` returns right after. So, when recording, the
  driver's bridge wraps the Algorithm's ``log_result`` and writes the iteration's
  ``TrainResult`` once it has returned.
- **The runners' events** are taken at each ``on_train_result`` and ``on_evaluate_end``
  (``foreach_env_runner``, every runner, healthy or not). A runner that does not answer, or
  whose numbering starts again, lost the events it kept: a ``RecordingGap`` (and a
  HookbusWarning) says so where the driver noticed it.
- **Stopping**: RLlib lets a callback do no more than mark the result. A handler's
  ``Control(stop_training=True)`` (on the driver, or on a runner: it comes as a metric in
  RLlib's results, ``STOP_KEY``) sets the iteration's ``result["done"] = True``: Tune ends the
  trial there, and a loop of one's own reads it.
"""

from __future__ import annotations

import functools
import warnings
import weakref
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

from hookbus.events import (
    BaseEvent,
    EvaluateEnd,
    EvaluateOfflineEnd,
    RecordingGap,
    TrainResult,
)
from hookbus.kernel import Control, HookbusWarning, Publisher

from ._bus import ResultRecorder, SyncBus
from ._rllib_bridge import STOP_KEY, Spec, build_callbacks, take_events
from ._rllib_data import plain_result

__all__ = ("ALGORITHM_SOURCE", "GAP_SOURCE", "DriverBridge", "iteration_of")

ALGORITHM_SOURCE = "algorithm"
GAP_SOURCE = "recorder"
"""The source of the ``RecordingGap`` events the driver writes."""


class DriverBridge:
    """The bus of the callbacks instance RLlib made in the Algorithm."""

    def __init__(self, spec: Spec, base: type) -> None:
        self.extra: dict[str, Any] = {}
        self.recorder = None if spec.record is None else ResultRecorder(spec.record, "rllib")
        self.bus = SyncBus(
            build_callbacks(spec, base, self.extra),
            spec.bus_options,
            source=ALGORITHM_SOURCE,
            backend=spec.backend,
            record=self.recorder,
            acts_on=("stop_training",),
        )
        # Gaps go under a source of their own: leaving them out of a stream leaves every
        # other source's numbering whole (check_lifecycle checks the rest then).
        self.gaps = Publisher(self.bus.bus, GAP_SOURCE)
        self.key = spec.key
        self.next_seq: dict[str, int] = {}  # per runner: the seq its next event must have
        self.seen: set[str] = set()  # the remote runners that ever answered
        self.lost: set[str] = set()  # those with a gap, not answering since
        self.stops: list[str] = []  # who asked to stop since the last result
        self.runner_stops = 0  # how many runner handlers did (evaluation's, until then)
        self.warned_stop = False
        self._follows: weakref.ref[Any] | None = None
        weakref.finalize(self, self.bus.close)

    # --- publishing -----------------------------------------------------------------------

    def publish(
        self, event_type: type[BaseEvent], live: Mapping[str, Any], **fields: Any
    ) -> Control | None:
        """Publish one of the driver's events, and write it at once if recording (they are
        few, and a run may end at any of them: RLlib's ``stop()`` calls no callback)."""
        control = self.bus.publish(event_type, live, **fields)
        if control is not None and control.stop_training:
            self.stops.extend(control.requested_by.get("stop_training") or (event_type.hook,))
        self.flush()
        return control

    def listens(self, event_type: type[BaseEvent]) -> bool:
        """Tell whether some handler (or the recorder) takes ``event_type``."""
        return self.bus.dispatcher(event_type).call is not None

    def flush(self) -> None:
        """Write what the recorder holds."""
        if self.recorder is not None:
            self.recorder.flush()

    def follow(self, algorithm: Any) -> None:
        """Have ``algorithm`` tell this bridge when its callbacks have all run on a result
        (its ``log_result`` wrapped), if recording: the TrainResult is written then."""
        if self.recorder is None or self._follows is not None:
            return
        log_result = getattr(algorithm, "log_result", None)
        if callable(log_result):
            algorithm.log_result = _AfterCallbacks(log_result, self.after_callbacks)
            self._follows = weakref.ref(algorithm)

    def after_callbacks(self, result: Any) -> None:
        """Write the iteration's TrainResult: ``result`` is now what ``train()`` returns."""
        if self.recorder is not None:
            self.recorder.write_result(result)

    # --- the hooks ------------------------------------------------------------------------

    def train_result(self, algorithm: Any, metrics_logger: Any, result: Any) -> None:
        """Take the runners' events, publish the result, mark a requested stop in it."""
        iteration = iteration_of(algorithm, result)
        self.take(getattr(algorithm, "env_runner_group", None), "env_runner", algorithm, iteration)
        self.runner_stops += _pop_stops(result)  # before any handler sees the result
        if self.listens(TrainResult):  # else no copy of the result is made
            live = {"algorithm": algorithm, "metrics_logger": metrics_logger, "result": result}
            data = plain_result(result)
            self.publish(TrainResult, live, training_iteration=iteration, result=data)
        self._mark_stop(result, iteration)
        if self.recorder is not None and not self._follows_algorithm(algorithm):
            self.recorder.write_result(result)  # nothing tells later: write it now
            self.follow(algorithm)

    def evaluate_end(
        self,
        event_type: type[EvaluateEnd | EvaluateOfflineEnd],
        algorithm: Any,
        metrics_logger: Any,
        evaluation_metrics: Any,
    ) -> None:
        """Publish the end of an evaluation round (online: its runners' events taken first)."""
        iteration = iteration_of(algorithm, None)
        if event_type is EvaluateEnd:
            group = getattr(algorithm, "eval_env_runner_group", None)
            self.take(group, "eval_env_runner", algorithm, iteration)
            self.runner_stops += _pop_stops(evaluation_metrics)
        if self.listens(event_type):  # else no copy of the metrics is made
            live = {
                "algorithm": algorithm,
                "metrics_logger": metrics_logger,
                "evaluation_metrics": evaluation_metrics,
            }
            data = plain_result(evaluation_metrics)
            self.publish(event_type, live, training_iteration=iteration, evaluation_metrics=data)

    def _follows_algorithm(self, algorithm: Any) -> bool:
        return self._follows is not None and self._follows() is algorithm

    # --- stopping -------------------------------------------------------------------------

    def _mark_stop(self, result: Any, iteration: int) -> None:
        asked, self.stops = self.stops, []
        runners, self.runner_stops = self.runner_stops, 0
        if not (asked or runners) or not isinstance(result, MutableMapping):
            return
        result["done"] = True
        if self.warned_stop:
            return
        self.warned_stop = True
        who = [*dict.fromkeys(asked)]
        if runners:
            who.append(f"{runners} handler call(s) on EnvRunners")
        warnings.warn(
            f"Control(stop_training=True) from {', '.join(who)}: RLlib lets a callback stop "
            f"training only by marking the result, so iteration {iteration}'s result has "
            f"done=True, which ends a Tune trial there; a loop calling algo.train() itself "
            f"must stop when result['done'] is True (warned once)",
            HookbusWarning,
            stacklevel=2,
        )

    # --- the runners' events ----------------------------------------------------------------

    def take(self, group: Any, prefix: str, algorithm: Any, iteration: int) -> None:
        """Write the events ``group``'s runners kept, and a gap for each runner that lost its."""
        if self.recorder is None or group is None:
            return
        from ray.exceptions import RayError  # RLlib is running, so Ray is there

        call = functools.partial(take_events, self.key)
        failure = None
        try:  # unhealthy runners too: one that is alive still has its events
            replies = group.foreach_env_runner(call, healthy_only=False)
        except RayError as exc:  # RLlib tolerates no runner failure: none of them came back
            replies, failure = [], exc
        answered = set()
        for source, events in replies:
            answered.add(source)
            self.lost.discard(source)
            self._write(source, events, algorithm, iteration)
        for source in sorted(self._remote_sources(group, prefix) - answered - self.lost):
            reason = (
                "it did not answer the driver's call to take them (its actor was lost)"
                if failure is None
                else f"the driver's call to take them failed ({type(failure).__name__})"
            )
            self._gap(source, algorithm, iteration, reason)
        self.flush()

    def _remote_sources(self, group: Any, prefix: str) -> set[str]:
        count = int(group.num_remote_env_runners())
        expected = {f"{prefix}:{index}" for index in range(1, count + 1)}
        return expected | {s for s in self.seen if s.rpartition(":")[0] == prefix}

    def _write(self, source: str, events: list[BaseEvent], algorithm: Any, iteration: int) -> None:
        if not source.endswith(":0"):  # a remote runner (index 0 is the driver's own)
            self.seen.add(source)
        if not events:
            return
        expected, first = self.next_seq.get(source), events[0].seq
        if expected is not None and first != expected:
            reason = (
                f"it numbers its events from {first} again (its actor was restarted): what "
                f"its previous process published from seq {expected} on, if anything, is lost"
                if first < expected
                else f"its events {expected} to {first - 1} never reached the driver"
            )
            self._gap(source, algorithm, iteration, reason)
        assert self.recorder is not None  # take() checked it
        for event in events:
            self.recorder.record(event=event)
        self.next_seq[source] = events[-1].seq + 1

    def _gap(self, source: str, algorithm: Any, iteration: int, reason: str) -> None:
        first_lost = self.next_seq.pop(source, 0)  # what comes next from it starts anew
        self.lost.add(source)
        fields = {
            "lost_source": source,
            "first_lost_seq": first_lost,
            "training_iteration": iteration,
            "reason": reason,
        }
        dispatcher = self.gaps.dispatcher(RecordingGap)  # the recorder listens to it
        if dispatcher.call is not None:
            live = {"algorithm": algorithm}
            self.bus.run(dispatcher, RecordingGap, live, fields, publisher=self.gaps)
        path = self.recorder.path if self.recorder is not None else None
        warnings.warn(
            f"the recording {path!r} lost {source}'s events from seq {first_lost} on "
            f"(iteration {iteration}): {reason}; a RecordingGap event marks the place",
            HookbusWarning,
            stacklevel=2,
        )


class _AfterCallbacks:
    """``Algorithm.log_result`` (its ``on_train_result`` callbacks, then Tune's logging),
    followed by ``then(result)``: ``Trainable.train()`` returns that result next."""

    def __init__(self, log_result: Callable[[Any], None], then: Callable[[Any], None]) -> None:
        # Weakly, if it is the Algorithm's method: the Algorithm holds this object.
        try:
            self._log_result: Callable[[], Any] = weakref.WeakMethod(log_result)
        except TypeError:  # another wrapper (a second bridge): it holds nothing back
            self._log_result = lambda: log_result
        self._then = then

    def __call__(self, result: Any) -> None:
        self._log_result()(result)
        self._then(result)


def _pop_stops(metrics: Any) -> int:
    """Take the runners' stop requests (``STOP_KEY``) out of RLlib's results or evaluation
    metrics; return how many were made since RLlib last reduced them."""
    if not isinstance(metrics, Mapping):
        return 0
    evaluation = metrics.get("evaluation")
    places = [metrics.get("env_runners")]
    if isinstance(evaluation, Mapping):
        places.append(evaluation.get("env_runners"))
    count = 0
    for runners in places:
        if isinstance(runners, MutableMapping):
            value = runners.pop(STOP_KEY, None)  # nan once none came: RLlib keeps the key
            if value is not None and float(value) > 0:
                count += int(value)
    return count


def iteration_of(algorithm: Any, result: Any) -> int:
    """Return the iteration a driver's event belongs to: the result's, else the Algorithm's."""
    if isinstance(result, Mapping) and "training_iteration" in result:
        return int(result["training_iteration"])
    return int(getattr(algorithm, "iteration", 0) or 0)
