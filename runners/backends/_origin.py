"""Where a runner's exception came from in the user's code, and when two failures are alike.

A failure's *origin* is ``file:line in function`` of the innermost frame of its traceback
that is the user's: outside hookbus and outside gymnasium (whose vector envs and wrappers
call the user's env); if no frame is the user's (hookbus refused something), the innermost
frame. An exception raised in a worker process or a Ray actor reaches the Algorithm
without its frames, so the worker describes it (``describe_remote``) and the rebuilt
exception keeps that description (``keep_description``).

Two failures are *the same* when they have the same exception type, message and origin
(``failure_key``). A lost worker (killed, crashed, out of time) has no origin in code and
is never the same as another: its message names its process, and its cause is outside.
"""

from __future__ import annotations

import os
import traceback

import gymnasium

from hookbus import events, kernel, metrics

__all__ = ("describe", "describe_remote", "failure_key", "keep_description", "origin")

# Folders whose frames are not the user's code: hookbus's four packages, and gymnasium's.
_LIBRARY_DIRS = tuple(
    os.path.dirname(os.path.abspath(file)) + os.sep
    for file in [
        *(package.__file__ or "" for package in (events, kernel, metrics, gymnasium)),
        os.path.dirname(os.path.abspath(__file__)),  # runners/backends/ -> runners/
    ]
)

_DESCRIPTION = "_hookbus_failure"  # the attribute keeping a remote exception's description


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


def failure_key(exc: BaseException) -> tuple[str, str, str] | None:
    """Return what makes two failures the same (type, message, origin), or None for a
    lost worker, which is never the same as another."""
    if getattr(exc, "worker_lost", False):
        return None
    kept = getattr(exc, _DESCRIPTION, None)
    if kept is not None:
        return (str(kept[0]), str(kept[1]), str(kept[2]))
    return describe_remote(exc)


def describe(exc: BaseException) -> str:
    """Describe ``exc`` on one line: its type, message and origin (a lost worker: its message).

    Only text: a log record that kept the exception would keep its frames, and with them
    an in-process runner.
    """
    key = failure_key(exc)
    if key is None:
        return str(exc)
    name, message, at = key
    return f"{name}: {message}" + (f" (at {at})" if at else "")
