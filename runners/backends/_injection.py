"""Fault injection for tests: a worker that dies (SIGKILL) at a named moment of a request.

A test sets ``HOOKBUS_FAULT_PLAN`` to a JSON list of ``Kill``s before the Algorithm starts
its workers. A worker process reads it when it starts (it inherits the environment); a Ray
actor gets the driver's value with its constructor. Without a plan nothing here runs: the
worker serves with its plain functions, and a plan only swaps in wrapped ones (no check per
request). Each ``Kill`` fires once: it creates its ``marker`` file and fires only if that
file did not exist, so the restarted worker of the same index behaves.

Moments: ``"receipt"``, the request has arrived and nothing of it is done (what the Algorithm
sees when a request reaches a dead worker: no reply, the worker gone); ``"reply"``, the
request is served and half of its reply is sent (a process's pipe then ends inside a frame).

A checkpoint save is killed the same way in the process that saves (the Algorithm's): a
``Kill`` with ``request="save"`` and ``runner=0`` dies at one of ``SAVE_PHASES`` of its
``nth`` save (``reach_save_phase``, called by the checkpoint writer): ``"begun"`` (the
temporary folder or file exists, empty), ``"written"`` (the file is written, not yet
synced), ``"synced"`` (file and folder synced, not yet renamed into place), ``"renamed"``
(in place, the parent folder not yet synced, stale temporaries not yet removed).
"""

from __future__ import annotations

import os
import signal
from collections import Counter
from collections.abc import Callable
from typing import Any, Literal, NoReturn, get_args

import msgspec

from ._wire import Init, Reply, Request

__all__ = ("FAULT_PLAN_ENV", "SAVE_PHASES", "Kill", "inject", "reach_save_phase", "read_plan")

FAULT_PLAN_ENV = "HOOKBUS_FAULT_PLAN"
SAVE = "save"
"""``Kill.request`` of a checkpoint save (in the Algorithm's process: ``runner=0``)."""
SAVE_PHASES = ("begun", "written", "synced", "renamed")
_REQUEST_MOMENTS = ("receipt", "reply")


class Kill(msgspec.Struct, frozen=True, kw_only=True):
    """Kill the worker of runner ``runner`` at the ``nth`` request ``request`` it serves."""

    runner: int
    """The runner's worker index (1..N); 0, the Algorithm's process, for a save."""
    request: str
    """What the request asks (its ``method``): ``"sample"``, ``"get_metrics"``, ...; or
    ``"save"``, a checkpoint save."""
    marker: str
    """A file path: the kill fires only if it does not exist yet, and creates it."""
    at: Literal["receipt", "reply", "begun", "written", "synced", "renamed"] = "receipt"
    """A request's moment, or a save's phase (``SAVE_PHASES``)."""
    nth: int = 1
    """Which of this worker's requests of that kind (1: the first); of its saves."""


def read_plan(text: str | None) -> list[Kill]:
    """Decode a plan (``HOOKBUS_FAULT_PLAN``'s JSON); none is an empty plan.

    A request that no message asks (a typo) is a ValueError: that kill would never fire.
    """
    plan = msgspec.json.decode(text, type=list[Kill]) if text else []
    known = {message.method for message in get_args(Request)} | {SAVE}
    for kill in plan:
        if kill.request not in known:
            raise ValueError(
                f"{FAULT_PLAN_ENV}: unknown request {kill.request!r}; known: {sorted(known)}"
            )
        moments = SAVE_PHASES if kill.request == SAVE else _REQUEST_MOMENTS
        if kill.at not in moments:
            raise ValueError(
                f"{FAULT_PLAN_ENV}: {kill.request!r} has no moment {kill.at!r}; "
                f"its moments: {', '.join(moments)}"
            )
    return plan


_saves_reached: Counter[str] = Counter()  # per phase, in this process


def reach_save_phase(phase: str) -> None:
    """Note that a checkpoint save reached ``phase``; die there if the plan says so.

    Without ``HOOKBUS_FAULT_PLAN`` this only reads the environment (saves are rare).
    """
    text = os.environ.get(FAULT_PLAN_ENV)
    if not text:
        return
    _saves_reached[phase] += 1
    for kill in read_plan(text):
        if (kill.request, kill.at, kill.nth) == (SAVE, phase, _saves_reached[phase]) and (
            kill.runner == 0 and _claim(kill.marker)
        ):
            _die()


def inject(
    plan: list[Kill], serve: Callable[[Request], Reply], send: Callable[[bytes], Any]
) -> tuple[Callable[[Request], Reply], Callable[[bytes], Any]]:
    """Return ``serve`` and ``send`` wrapped so that the worker dies as ``plan`` says.

    ``serve`` answers a request; ``send`` delivers an encoded reply (a frame on the pipe, or
    the bytes a Ray actor returns).
    """
    seen: Counter[str] = Counter()
    index: int | None = None  # the worker's runner, from its Init
    dying = False  # a reply kill is due: the reply goes out half

    def due(request: Request, at: str) -> bool:
        return any(
            (kill.runner, kill.request, kill.at, kill.nth)
            == (index, request.method, at, seen[request.method])
            and _claim(kill.marker)
            for kill in plan
        )

    def serving(request: Request) -> Reply:
        nonlocal index, dying
        if isinstance(request, Init):
            index = request.worker_index
        seen[request.method] += 1
        if due(request, "receipt"):
            _die()
        reply = serve(request)
        dying = due(request, "reply")
        return reply

    def sending(data: bytes) -> Any:
        if not dying:
            return send(data)
        send(data[: len(data) // 2])
        _die()

    return serving, sending


def _claim(marker: str) -> bool:
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def _die() -> NoReturn:
    os.kill(os.getpid(), signal.SIGKILL)  # what kill -9 does to a worker, threads and all
    os._exit(137)  # not reached: SIGKILL cannot be caught
