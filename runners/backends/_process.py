"""The ``"process"`` backend: an EnvRunner in a worker process, driven from the event loop."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import anyio
import cloudpickle
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from hookbus.kernel import Bus, ConfigError

from ._remote import RemoteEnvRunner, import_path
from ._wire import (
    Init,
    RemoteError,
    Reply,
    Request,
    ServiceCall,
    Setup,
    Stop,
    decode_reply,
    frame,
)

if TYPE_CHECKING:
    from ..config import AlgorithmConfig
    from ._base import EnvRunnerHandle

__all__ = ("ProcessEnvRunner", "worker_command")

_STOP_TIMEOUT_S = 10.0


class ProcessEnvRunner(RemoteEnvRunner):
    """Drive an EnvRunner living in a worker process, with the EnvRunner's API (async).

    The worker builds its own bus and callback instances from the config (observers
    excepted) and its own copy of the module; the events that observers on the Algorithm's
    bus want are sent back after each call and forwarded to them in order. Messages are
    length-prefixed frames over the worker's stdin and stdout.
    """

    def __init__(
        self, config: AlgorithmConfig[Any], *, bus: Bus, worker_index: int, module: Any = None
    ) -> None:
        super().__init__(config, bus=bus, worker_index=worker_index, module=module)
        self._process: Process | None = None
        self._replies: BufferedByteReceiveStream | None = None
        self._lock: anyio.Lock | None = None
        self._pid: int | None = None  # the last worker's, for messages after it ended

    @property
    def healthy(self) -> bool:
        """Whether the worker process is running (not yet started, stopped or lost: False)."""
        return self._process is not None and self._process.returncode is None

    @property
    def where(self) -> str:
        """Name this runner and its worker process, for messages."""
        if self._process is not None:
            process = f"worker process {self._process.pid}"
        elif self._pid is not None:
            process = f"worker process {self._pid}, ended"
        else:
            process = "worker process not started"
        return f"env runner {self.worker_index} ({process})"

    # --- lifecycle --------------------------------------------------------------------------

    async def setup(self) -> None:
        """Start the worker, send it the config and module, publish its env's creation."""
        payload = _pickled_config(self.config, self.module)
        self._restarted()
        self._process = await anyio.open_process(
            worker_command(payload["sys_path"]),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,
        )
        self._pid = self._process.pid
        assert self._process.stdout is not None
        self._replies = BufferedByteReceiveStream(self._process.stdout)
        self._lock = anyio.Lock()
        await self._request(Init(worker_index=self.worker_index, seqs=self._seqs, **payload))
        await self._request(Setup())

    async def kill(self) -> None:
        """End the worker process at once (a hung env cannot be asked to stop)."""
        process, self._process = self._process, None
        if process is not None:
            await _end(process)

    async def stop(self) -> None:
        """Ask the worker to close its env and exit; kill it if it does not."""
        process, self._process = self._process, None
        if process is None:
            return
        try:
            with anyio.move_on_after(_STOP_TIMEOUT_S):
                await self._send(process, Stop())
                await process.wait()
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass  # already gone
        finally:
            await _end(process)

    # --- the pipe ---------------------------------------------------------------------------

    async def _exchange(self, message: Request) -> Reply:
        process, replies, lock = self._process, self._replies, self._lock
        if process is None or replies is None or lock is None:
            raise RemoteError.lost(f"{self.where} is not running")
        async with lock:
            answered = False
            try:
                await self._send(process, message)
                while True:
                    head = await replies.receive_exactly(4)
                    reply = decode_reply(
                        await replies.receive_exactly(int.from_bytes(head, "little"))
                    )
                    if not isinstance(reply, ServiceCall):
                        break
                    # A callback or env in the worker calls a service of ours, mid-request.
                    await self._send(process, await self._serve_service(reply))
                answered = True
            except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError) as exc:
                code = await _exit_code(process)
                raise RemoteError.lost(f"{self.where} died (exit code {code})") from exc
            finally:
                if not answered:
                    # Cancelled (a timeout) or broken between request and reply: the pipe is
                    # out of step for good, so this worker can serve no further request.
                    if self._process is process:
                        self._process = None
                    await _end(process)
        return reply

    @staticmethod
    async def _send(process: Process, message: Request) -> None:
        assert process.stdin is not None
        await process.stdin.send(frame(message))


# A worker's first statement replaces its import path with the Algorithm's (argv[2:]) before
# anything is imported but the builtin ``sys``; only then do hookbus and its dependencies load.
_START = (
    "import sys; sys.path[:] = sys.argv[2:]; del sys.argv[2:]; "
    "from hookbus.runners.backends._worker import main; main()"
)


def worker_command(path: list[str]) -> list[str]:
    """Return the command line of a worker process whose import path is ``path``, no more.

    ``path`` is the Algorithm's ``sys.path`` (SPEC.md: a worker imports what the driver's
    path reaches, never the working folder). ``python -m`` would put the working folder
    first and import hookbus, msgspec and the rest from there before any message came, so
    the worker starts with ``-c`` and its first statement sets the path (``_START``); ``-P``
    keeps ``-c``'s own empty entry (the working folder) off the path even before that. An
    empty entry in ``path`` is the Algorithm's own (it was started with ``-c``) and stays:
    the worker starts in the same folder, so it reaches what the Algorithm reaches.

    Not ``-I`` or ``-E``: they would drop the ``PYTHON*`` variables (``PYTHONHASHSEED``,
    ``PYTHONWARNINGS``, ``PYTHONFAULTHANDLER``...) that hold for the worker as for the
    Algorithm; ``PYTHONPATH`` no longer decides imports, since the path is replaced. The
    Algorithm's own ``-I``, ``-E``, ``-s`` and ``-S`` are passed on, so the same site hooks
    (``.pth`` files, ``sitecustomize``) run at start. The last argument before the path is
    our pid: the worker exits as soon as its parent is another (we died).
    """
    flags = sys.flags
    inherited = [
        flag
        for flag, on in (
            ("-I", flags.isolated),
            ("-E", flags.ignore_environment),
            ("-s", flags.no_user_site),
            ("-S", flags.no_site),
        )
        if on
    ]
    return [sys.executable, *inherited, "-P", "-c", _START, str(os.getpid()), *path]


async def _end(process: Process) -> None:
    """Kill ``process`` unless it exited, and release its pipes (shielded from cancellation)."""
    with anyio.CancelScope(shield=True):
        if process.returncode is None:
            try:
                process.kill()
            except ProcessLookupError:
                pass  # exited just now
            await process.wait()
        await process.aclose()


async def _exit_code(process: Process) -> int | None:
    with anyio.move_on_after(1.0):
        await process.wait()
    return process.returncode


def _pickled_config(config: AlgorithmConfig[Any], module: Any) -> dict[str, Any]:
    """Pickle what a worker needs (by cloudpickle, as Ray does), or explain what cannot
    cross to a process."""
    try:
        data = cloudpickle.dumps(config)
        module_data = cloudpickle.dumps(module)
    except (pickle.PicklingError, AttributeError, TypeError) as exc:
        raise ConfigError(
            f"backend='process' sends the config to worker processes with cloudpickle, "
            f"which failed: {exc}. Keep what the config holds (callbacks, env creators, "
            f"env_task_fn) free of unpicklable state such as open files and locks, or use "
            f"backend='inline'"
        ) from exc
    main_path = None
    if b"__main__" in data:  # the config refers to objects of the main script
        main = sys.modules["__main__"]
        main_path = getattr(main, "__file__", None)
        if main_path is None:
            raise ConfigError(
                "backend='process' cannot send objects defined in an interactive session's "
                "__main__ to worker processes; define them in a module"
            )
    return {
        "config": data,
        "module": module_data,
        "main_path": main_path,
        "sys_path": import_path(),
    }


if TYPE_CHECKING:  # mypy checks that the class keeps the backend contract
    _contract: type[EnvRunnerHandle] = ProcessEnvRunner
