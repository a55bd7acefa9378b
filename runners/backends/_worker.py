"""A worker process running one EnvRunner, started by ``_process.worker_command``.

It reads requests from stdin and answers on the original stdout, one frame each (see
``_wire``). User code printing in callbacks writes to stderr instead, so it can never
corrupt the protocol.
"""

from __future__ import annotations

import functools
import os
import pickle
import runpy
import signal
import sys
import threading
import time
import types
from collections.abc import Callable
from typing import Any, BinaryIO

import anyio

from hookbus.events import BaseEvent, event_types
from hookbus.kernel import Control

from .._errors import LOADING_MAIN_ENV, MainGuardError
from ..env_runner import EnvRunner, env_runner_class, make_bus
from ._injection import FAULT_PLAN_ENV, inject, read_plan
from ._origin import note_steps, runner_steps
from ._services import PipeServices
from ._wire import (
    Call,
    Done,
    Failed,
    GetMetrics,
    Init,
    Reply,
    Request,
    Sample,
    SampleAndGetMetrics,
    Sampled,
    Setup,
    SetWeights,
    Stop,
    Summary,
    episode_to_wire,
    error_to_wire,
    events_to_wire,
    frame,
    read_frame_sync,
)

__all__ = ("Worker", "main")

_PARENT_POLL_S = 0.2
_ORPHANED = 70  # the exit status of a worker whose Algorithm died


class Worker:
    """Serve one EnvRunner's requests: each request type names the method serving it."""

    def __init__(self, services: Callable[[str], Any] | None = None) -> None:
        self._services = services  # finds the Algorithm's services (ServiceRegistry.connect)
        self.runner: EnvRunner | None = None
        self.forwarded: list[BaseEvent] = []
        self.forwarding: set[str] = set()

    def serve(self, request: Request) -> Reply:
        """Serve ``request``: its reply, or ``Failed`` with what it raised (never raises)."""
        try:
            return self.handle(request)
        except BaseException as exc:
            note_steps(exc, runner_steps(self.runner))  # where it failed (fleet/_repeats)
            # What handlers asked for before the failure goes back with it: the runner may
            # not serve another request (a restart builds it anew), so it would be lost.
            reply = Failed(
                error=error_to_wire(exc),
                events=events_to_wire(self.forwarded),
                handler_errors=self.handler_errors(),
                control=self.take_control(),
            )
            self.forwarded = []
            return reply

    def handle(self, request: Request) -> Reply:
        """Serve ``request``; the reply carries the events observers want and the Controls."""
        if not isinstance(request, Init):
            if self.runner is None:
                raise RuntimeError("the worker got a request before init")
            self.forward(request.forward)
        reply: Reply = getattr(self, request.method)(request)
        reply.events, self.forwarded = events_to_wire(self.forwarded), []
        reply.handler_errors = self.handler_errors()
        reply.control = self.take_control()
        return reply

    # --- one method per request type --------------------------------------------------------

    def init(self, request: Init) -> Done:
        # The Algorithm's import path first; this interpreter's own entries stay behind it
        # (a Ray actor on another machine may need them).
        sys.path[:] = [*request.sys_path, *(p for p in sys.path if p not in request.sys_path)]
        if request.main_path:
            _load_main(request.main_path)
        try:
            config = pickle.loads(request.config)
            module = pickle.loads(request.module)
        except AttributeError as exc:  # "Can't get attribute 'CB' on <module '__main__' ...>"
            if request.main_path and "main__" in str(exc):  # __main__ or __mp_main__
                raise MainGuardError.for_script(
                    request.main_path, f"lacks what the config uses ({exc})", missing=True
                ) from exc
            raise
        except ModuleNotFoundError as exc:
            exc.add_note(
                f"hookbus: the config uses objects of module {exc.name!r}, which a worker "
                f"imports by name from the Algorithm's sys.path (never the working folder); "
                f"that path does not reach it, though the Algorithm had it imported (say, "
                f"by pytest's --import-mode=importlib, or from a folder on sys.path then): "
                f"put that folder on sys.path, or define the objects in a module on it"
            )
            raise
        # Observers stay on the Algorithm's bus; everything else runs here, as in RLlib.
        bus = make_bus(config, observers=False)
        if self._services is not None:
            bus.services.connect(lookup=self._services)
        self.runner = env_runner_class(config)(
            config, bus=bus, module=module, worker_index=request.worker_index
        )
        self.runner.event_seq = request.seqs.get(self.runner.source, 0)
        return Done()

    def setup(self, request: Setup) -> Done:
        anyio.run(self._runner.setup)
        return Done()

    def sample(self, message: Sample) -> Sampled:
        chunks = anyio.run(self._runner.sample_request, message.request)
        return Sampled(episodes=[episode_to_wire(e) for e in chunks])

    def sample_and_get_metrics(self, message: SampleAndGetMetrics) -> Summary:
        return Summary(summary=anyio.run(self._runner.sample_and_get_metrics, message.request))

    def get_metrics(self, request: GetMetrics) -> Done:
        return Done(value=self._runner.get_metrics())

    def set_weights(self, request: SetWeights) -> Done:
        self._runner.set_weights(request.weights)
        return Done()

    def call(self, request: Call) -> Done:
        fn = pickle.loads(request.fn)
        runner = self._runner
        if request.on == "runner":
            result = fn(runner)
        elif request.on == "env":
            result = runner.foreach_env(fn)
        else:
            result = runner.foreach_env_with_context(fn)
        return Done(value=pickle.dumps(result))

    def stop(self, request: Stop) -> Done:
        self._runner.stop()
        return Done()

    # --- helpers ----------------------------------------------------------------------------

    @property
    def _runner(self) -> EnvRunner:
        assert self.runner is not None
        return self.runner

    def forward(self, hooks: list[str]) -> None:
        """Subscribe the event collector to exactly ``hooks`` (those this process knows:
        an event type of the Algorithm's that no code here defined is never published here)."""
        known = event_types()
        wanted = {hook for hook in hooks if hook in known}
        bus = self._runner.bus
        for hook in self.forwarding - wanted:
            bus.unsubscribe(hook, self._collect)
        for hook in wanted - self.forwarding:
            bus.subscribe(hook, self._collect)
        self.forwarding = wanted

    def _collect(self, *, event: BaseEvent, **kwargs: Any) -> None:
        self.forwarded.append(event)

    def handler_errors(self) -> int:
        """Return how many handler exceptions this worker's bus counted (``on_error="log"``)."""
        return self.runner.bus.statistics().errors if self.runner is not None else 0

    def take_control(self) -> Control | None:
        """Return (and forget) what this worker's handlers asked for since the last reply."""
        return self.runner.take_control() if self.runner is not None else None


def _load_main(path: str) -> None:
    """Run the Algorithm's main script as ``__mp_main__`` (as multiprocessing's spawn does).

    Objects it defines are pickled as ``__main__.X``, so it also becomes ``__main__`` here.
    Its ``if __name__ == "__main__":`` block does not run.
    """
    os.environ[LOADING_MAIN_ENV] = path  # an Algorithm built meanwhile raises MainGuardError
    try:
        namespace = runpy.run_path(path, run_name="__mp_main__")
    except MainGuardError:
        raise
    except (Exception, SystemExit) as exc:  # argparse exits when given the worker's argv
        raise MainGuardError.for_script(
            path, f"fails when imported ({type(exc).__name__}: {exc})"
        ) from exc
    finally:
        del os.environ[LOADING_MAIN_ENV]
    module = types.ModuleType("__mp_main__")
    module.__dict__.update(namespace)
    sys.modules["__mp_main__"] = sys.modules["__main__"] = module


def _exit_with_parent(parent: int) -> None:
    """End this process as soon as ``parent`` is no longer its parent (it died).

    Reading requests notices that too (the pipe ends), but not while an env step hangs:
    so a daemon thread watches. No prctl(PR_SET_PDEATHSIG): it fires when the parent
    *thread* ends, and trio starts processes from short-lived worker threads.
    """

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_PARENT_POLL_S)
        os._exit(_ORPHANED)

    threading.Thread(target=watch, name="hookbus-parent-watch", daemon=True).start()


def main() -> None:
    """Serve requests until told to stop or the Algorithm goes away."""
    if len(sys.argv) > 1:
        _exit_with_parent(int(sys.argv[1]))
    requests: BinaryIO = sys.stdin.buffer
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # prints go to stderr from now on
    sys.stdout = sys.stderr
    # Ctrl-C in a terminal signals the whole process group. The Algorithm decides when its
    # workers end (it asks them to stop, or its exit closes our stdin), so ignore it here:
    # otherwise every worker would print a KeyboardInterrupt traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    worker = Worker(services=PipeServices(requests, replies).lookup)
    serve: Callable[[Request], Reply] = worker.serve
    send: Callable[[bytes], Any] = functools.partial(_send, replies)
    plan = read_plan(os.environ.get(FAULT_PLAN_ENV))
    if plan:  # tests only: die at a named moment (_injection)
        serve, send = inject(plan, serve, send)
    while True:
        request = read_frame_sync(requests)
        if request is None:
            return
        send(frame(serve(request)))
        if isinstance(request, Stop):
            return


def _send(replies: BinaryIO, data: bytes) -> None:
    replies.write(data)
    replies.flush()


if __name__ == "__main__":
    main()
