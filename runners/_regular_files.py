"""Read a file that data names, bounded: a regular file only, never more than a limit.

A checkpoint's state file may be anything its folder holds: a link to ``/dev/zero``, a FIFO
with no writer (``open`` would wait for one forever), a sparse file of gigabytes. Each is
refused here by what ``stat`` says before a byte is read: the kind of file (a link is
followed only to a regular file) and its size. The file is then opened without blocking
and checked again by ``fstat`` (what is read is what was checked, whatever was swapped in
between), and at most ``limit + 1`` bytes are read, so a file that grows after the check
is refused too. Recordings (``kernel.MAX_FRAME_SIZE``) and ``--config`` files
(``app/_config_file.MAX_BYTES``) are bounded the same way.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from hookbus.kernel import ConfigError

__all__ = ("describe_kind", "read_regular_file", "show_bytes")

_CHUNK = 2**20  # what a file that grew after its check is read on by

_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFLNK: "a symbolic link",
}


def describe_kind(path: str | os.PathLike[str]) -> str:
    """Say what ``path`` is ("a directory", "a link to a character device ('/dev/zero')",
    "missing"), following links: the words of an error about a file of the wrong kind."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "a broken symbolic link" if os.path.islink(path) else "missing"
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    kind = _KINDS.get(stat.S_IFMT(mode), "a regular file" if stat.S_ISREG(mode) else "unknown")
    if os.path.islink(path):
        return f"a link to {kind} ({os.readlink(path)!r})"
    return kind


def show_bytes(count: int) -> str:
    """Write a byte count for people: ``1,073,741,824 bytes (1 GiB)``."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= size:
            return f"{count:,} bytes ({count / size:.3g} {unit})"
    return f"{count:,} bytes"


def read_regular_file(path: Path, *, limit: int, bound: str, what: str) -> bytes:
    """Return the bytes of regular file ``path``, which must hold at most ``limit`` bytes.

    ``bound`` names the limit in messages (``MAX_CHECKPOINT_BYTES``), ``what`` the file
    ("checkpoint file"). FileNotFoundError if nothing is there (the caller knows what a
    missing file means); ConfigError naming the file for any other kind of file (links
    are followed only to regular files), one over ``limit``, or one that cannot be read.
    """
    try:
        found = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise ConfigError(_wrong_kind(path, what)) from None
        raise
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {str(path)!r}: {exc.strerror}") from exc
    _check(path, found, limit, bound, what)
    try:
        # O_NONBLOCK: a FIFO put in place after the stat opens at once (and is refused
        # below) instead of waiting for a writer; it changes nothing for a regular file.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {str(path)!r}: {exc.strerror}") from exc
    with open(fd, "rb") as stream:  # buffered: read(n) reads on to n bytes or the end
        opened = os.fstat(fd)
        _check(path, opened, limit, bound, what)
        try:
            data = _read_at_most(stream, opened.st_size, limit + 1)
        except OSError as exc:
            raise ConfigError(f"cannot read {what} {str(path)!r}: {exc.strerror}") from exc
    if len(data) > limit:  # it grew after the check
        raise ConfigError(_too_large(path, len(data), limit, bound, what, "at least "))
    return data


def _read_at_most(stream: BinaryIO, size: int, most: int) -> bytes:
    """Read ``stream`` (a file of ``size`` bytes when checked) to its end, or ``most`` bytes.

    ``read(n)`` allocates ``n`` bytes before it reads: asking for the size the file has
    (and one more, to see its end) costs no more than the file, where ``read(most)``
    would take the whole bound for a file of a few bytes.
    """
    first = stream.read(min(size + 1, most))
    if len(first) <= size:
        return first  # the end came first
    parts, total = [first], len(first)
    while total < most:  # it grew since it was checked: read on, never past ``most``
        chunk = stream.read(min(_CHUNK, most - total))
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
    return b"".join(parts)


def _check(path: Path, found: os.stat_result, limit: int, bound: str, what: str) -> None:
    if not stat.S_ISREG(found.st_mode):
        raise ConfigError(_wrong_kind(path, what))
    if found.st_size > limit:
        raise ConfigError(_too_large(path, found.st_size, limit, bound, what, ""))


def _wrong_kind(path: Path, what: str) -> str:
    return (
        f"{what} {str(path)!r} is {describe_kind(path)}, not a regular file; hookbus reads "
        f"a {what} only from a regular file (a link to one is followed)"
    )


def _too_large(path: Path, size: int, limit: int, bound: str, what: str, least: str) -> str:
    return (
        f"{what} {str(path)!r} holds {least}{show_bytes(size)}, more than the "
        f"{show_bytes(limit)} that hookbus reads from one ({bound})"
    )
