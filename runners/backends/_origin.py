"""Where a runner's exception came from in the user's code, and when two failures are alike.

A failure's *origin* is ``file:line in function`` of the innermost frame of its traceback
that is the user's: outside hookbus and outside gymnasium (whose vector envs and wrappers
call the user's env); if no frame is the user's (hookbus refused something), the innermost
frame. An exception raised in a worker process or a Ray actor reaches the Algorithm
without its frames, so the worker describes it (``describe_remote``) and the rebuilt
exception keeps that description (``keep_description``).

A failure's *point* is how many env steps its runner had sampled since it was made when it
failed (0: in its constructor, or before its first step). The handle of the runner notes it
on the exception (``note_steps``), in this process or in the worker, where the runner is;
it crosses the wire with the description.

Two failures are *the same* when they have the same exception type, message, origin and
point (``failure_key``): a bug fails a new runner at the same point every time, where a
random crash falls at a random step. A lost worker (killed, crashed, out of time) has no
origin in code and is never the same as another: its message names its process, and its
cause is outside.
"""

from __future__ import annotations

import os
import traceback
from typing import Any

import gymnasium

from hookbus import events, kernel, metrics

__all__ = (
    "describe",
    "describe_remote",
    "failure_key",
    "failure_steps",
    "keep_description",
    "note_steps",
    "origin",
    "runner_steps",
)

# Folders whose frames are not the user's code: hookbus's four packages, and gymnasium's.
_LIBRARY_DIRS = tuple(
    os.path.dirname(os.path.abspath(file)) + os.sep
    for file in [
        *(package.__file__ or "" for package in (events, kernel, metrics, gymnasium)),
        os.path.dirname(os.path.abspath(__file__)),  # runners/backends/ -> runners/
    ]
)

_DESCRIPTION = "_hookbus_failure"  # the attribute keeping a remote exception's description
_STEPS = "_hookbus_failure_steps"  # the attribute keeping a failure's point (env steps)
_LIFETIME_STEPS = "num_env_steps_sampled_lifetime"  # EnvRunner.get_state()'s key (RLlib's)


def origin(exc: BaseException) -> str:
    """Return ``file:line in function`` where ``exc`` was raised in the user's code ("" if
    it has no traceback); for a worker's exception, where the worker found it raised."""
    kept = getattr(exc, _DESCRIPTION, None)
    if kept is not None:
        return str(kept[2])
    frames = traceback.extract_tb(exc.__traceback__)
    theirs = [f for f in frames if not f.filename.startswith(_LIBRARY_DIRS)] or frames
    if not theirs:
        return ""
    frame = theirs[-1]
    return f"{frame.filename}:{frame.lineno} in {frame.name}"


def describe_remote(exc: BaseException) -> tuple[str, str, str]:
    """Return ``exc``'s type name, message and origin, for an exception about to cross."""
    try:
        message = str(exc)
    except Exception:  # a broken __str__ must not hide the failure itself
        message = f"<{type(exc).__qualname__} whose str() failed>"
    return type(exc).__qualname__, message, origin(exc)


def keep_description(exc: BaseException, description: tuple[str, str, str]) -> None:
    """Give ``exc`` (rebuilt from a worker's) the type, message and origin the worker saw."""
    try:
        setattr(exc, _DESCRIPTION, description)
    except (AttributeError, TypeError):  # an exception type without a __dict__
        pass


def note_steps(exc: BaseException, steps: int | None) -> None:
    """Note on ``exc`` that its runner had sampled ``steps`` env steps when it was raised
    (the latest note stands: an exception raised again is noted again). None notes nothing.
    """
    if steps is None:
        return
    try:
        setattr(exc, _STEPS, int(steps))
    except (AttributeError, TypeError):  # an exception type without a __dict__
        pass


def failure_steps(exc: BaseException) -> int | None:
    """Return the env steps ``exc``'s runner had sampled when it failed (None: not noted)."""
    steps = getattr(exc, _STEPS, None)
    return None if steps is None else int(steps)


def runner_steps(env_runner: Any) -> int | None:
    """Return the env steps ``env_runner`` sampled since it was made: 0 for None (no
    runner yet: its constructor raised, or was not called), None if it cannot say.

    Read from ``get_state()`` (RLlib's key), which only a failure calls. A restarted
    runner gets the learner's weights only, never this count (RLlib's restore syncs it),
    so a new runner's count starts at 0.
    """
    if env_runner is None:
        return 0
    try:
        return int(env_runner.get_state()[_LIFETIME_STEPS])
    except Exception:  # a runner too broken to say: the failure stays what it is
        return None


def failure_key(exc: BaseException) -> tuple[str, str, str, int | None] | None:
    """Return what makes two failures the same (type, message, origin, point), or None for
    a lost worker, which is never the same as another."""
    if getattr(exc, "worker_lost", False):
        return None
    kept = getattr(exc, _DESCRIPTION, None)
    if kept is not None:
        return (str(kept[0]), str(kept[1]), str(kept[2]), failure_steps(exc))
    return (*describe_remote(exc), failure_steps(exc))


def describe(exc: BaseException) -> str:
    """Describe ``exc`` on one line: its type, message and origin (a lost worker: its message).

    Only text: a log record that kept the exception would keep its frames, and with them
    an in-process runner.
    """
    key = failure_key(exc)
    if key is None:
        return str(exc)
    name, message, at, _ = key
    return f"{name}: {message}" + (f" (at {at})" if at else "")
