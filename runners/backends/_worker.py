"""A worker process running one EnvRunner: ``python -m hookbus.runners.backends._worker``.

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
import types
from typing import Any, BinaryIO

import anyio

from hookbus.events import BaseEvent, codec
from hookbus.kernel import Bus

from .._builtin import EnvRunnerMetrics
from .._env_runner import EnvRunner
from ._wire import episode_to_wire, error_to_wire, frame, read_frame_sync

__all__ = ("main",)


class Worker:
    """Serve one EnvRunner's requests."""

    def __init__(self) -> None:
        self.runner: EnvRunner | None = None
        self.forwarded: list[BaseEvent] = []
        self.forwarding: set[str] = set()

    def init(self, message: dict[str, Any]) -> None:
        sys.path[:] = message["sys_path"]
        if message["main_path"]:
            _load_main(message["main_path"])
        config = pickle.loads(message["config"])
        module = pickle.loads(message["module"])
        # Observers stay on the Algorithm's bus; everything else runs here, as in RLlib.
        classes = [c for c in config.callbacks_class if not getattr(c, "observer", False)]
        bus = Bus(
            classes, on_error=config.on_error, plugins=config.plugins, **config.callbacks_per_hook
        )
        bus.add_callbacks(EnvRunnerMetrics())
        self.runner = EnvRunner(
            config, bus=bus, module=module, worker_index=message["worker_index"]
        )

    def forward(self, hooks: list[str]) -> None:
        """Subscribe the event collector to exactly ``hooks``."""
        assert self.runner is not None
        wanted = set(hooks)
        for hook in self.forwarding - wanted:
            self.runner.bus.unsubscribe(hook, self._collect)
        for hook in wanted - self.forwarding:
            self.runner.bus.subscribe(hook, self._collect)
        self.forwarding = wanted

    def _collect(self, *, event: BaseEvent, **kwargs: Any) -> None:
        self.forwarded.append(event)

    def handler_errors(self) -> int:
        """Return how many handler exceptions this worker's bus counted (``on_error="log"``)."""
        return self.runner.bus.statistics().errors if self.runner is not None else 0

    def take_events(self) -> bytes:
        events, self.forwarded = self.forwarded, []
        return codec.encode_msgpack(events)

    def handle(self, message: dict[str, Any]) -> Any:
        op = message["op"]
        if op == "init":
            return self.init(message)
        runner = self.runner
        assert runner is not None, "init must come first"
        self.forward(message.get("forward", []))
        if op == "setup":
            anyio.run(runner.setup)
            return {"events": self.take_events()}
        if op == "sample":
            call = functools.partial(
                runner.sample,
                message["num_timesteps"],
                message["num_episodes"],
                message["random_actions"],
                force_reset=message.get("force_reset", False),
                exact=message.get("exact", False),
            )
            episodes = anyio.run(call)
            return {
                "episodes": [episode_to_wire(e) for e in episodes],
                "events": self.take_events(),
            }
        if op == "sample_and_get_metrics":
            summary = anyio.run(
                functools.partial(
                    runner.sample_and_get_metrics,
                    message["num_timesteps"],
                    message["num_episodes"],
                    force_reset=message["force_reset"],
                    exact=message["exact"],
                )
            )
            return {**summary._asdict(), "events": self.take_events()}
        if op == "get_metrics":
            return runner.get_metrics()
        if op == "set_weights":
            return runner.set_weights(message["weights"])
        if op == "call":
            fn = pickle.loads(message["fn"])
            on = message["on"]
            if on == "runner":
                return pickle.dumps(fn(runner))
            if on == "env":
                return pickle.dumps(runner.foreach_env(fn))
            return pickle.dumps(runner.foreach_env_with_context(fn))
        if op == "stop":
            return runner.stop()
        raise ValueError(f"unknown request {op!r}")


def _load_main(path: str) -> None:
    """Run the Algorithm's main script as ``__mp_main__`` (as multiprocessing's spawn does).

    Objects it defines are pickled as ``__main__.X``, so it also becomes ``__main__`` here.
    Its ``if __name__ == "__main__":`` block does not run.
    """
    namespace = runpy.run_path(path, run_name="__mp_main__")
    module = types.ModuleType("__mp_main__")
    module.__dict__.update(namespace)
    sys.modules["__mp_main__"] = sys.modules["__main__"] = module


def main() -> None:
    """Serve requests until told to stop or the Algorithm goes away."""
    requests: BinaryIO = sys.stdin.buffer
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # prints go to stderr from now on
    sys.stdout = sys.stderr
    # Ctrl-C in a terminal signals the whole process group. The Algorithm decides when its
    # workers end (it asks them to stop, or its exit closes our stdin), so ignore it here:
    # otherwise every worker would print a KeyboardInterrupt traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    worker = Worker()
    while True:
        message = read_frame_sync(requests)
        if message is None:
            return
        try:
            reply = {"ok": worker.handle(message)}
        except BaseException as exc:
            reply = {"error": error_to_wire(exc)}
        reply["handler_errors"] = worker.handler_errors()
        replies.write(frame(reply))
        replies.flush()
        if message.get("op") == "stop":
            return


if __name__ == "__main__":
    main()
